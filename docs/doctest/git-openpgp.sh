source "$REPO/docs/doctest/_git.sh"
mkdir -m 700 -p "$GNUPGHOME"
