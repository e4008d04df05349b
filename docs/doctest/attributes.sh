hsmc keys gen -a ec-p256 -l release_ec --persistent >/dev/null
hsmc keys set label:release_ec --id 0a1b >/dev/null
