hsmc keys gen -a ec-p256 -l release_p256 --persistent >/dev/null
