source "$REPO/docs/doctest/_rel.sh"
head -c 5000 /dev/urandom > app-2.0.tar.gz
head -c 5000 /dev/urandom > app-2.0.deb
