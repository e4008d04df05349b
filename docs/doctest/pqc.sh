# The organisation's policy the page shows, in the data folder's policies folder.
mkdir -p ~/.local/share/hsm-console/policies
sed -n '/^```toml/,/^```/p' "$REPO/docs/src/pqc.md" | sed '1d;$d' > ~/.local/share/hsm-console/policies/corp.toml
hsmc keys gen -a ml-dsa-65 -l release_ml_dsa_65 --persistent >/dev/null
