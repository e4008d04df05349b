hsmc keys gen -a ed25519 -l archive_ed25519 --persistent >/dev/null
