# The repository's build output, as a reader in the checkout sees it; the built-in
# partition's files made by a first run.
ln -s "$REPO/target" target
hsmc slots >/dev/null
source "$REPO/docs/doctest/_softhsm.sh"
