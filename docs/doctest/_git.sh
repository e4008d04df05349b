# A git repository with a change staged, and the signing key.
git init -q repo && cd repo
git config user.name Dev && git config user.email dev@example.org
echo "hello" > README && git add README
hsmc keys gen -a ed25519 -l release_ed25519 --persistent >/dev/null
