source "$REPO/docs/doctest/_rel.sh"
