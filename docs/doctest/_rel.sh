hsmc keys gen -a ed25519 -l rel_ed25519 --persistent >/dev/null
hsmc keys gen -a ml-dsa-65 -l rel_mldsa65 --persistent >/dev/null
