source "$REPO/docs/doctest/_git.sh"
