# A SoftHSM2 token labelled LABEL ($1), in this page's own SoftHSM2 store.
export SOFTHSM2_CONF="$HOME/softhsm2.conf"
mkdir -p "$HOME/softhsm-tokens"
printf 'directories.tokendir = %s\nobjectstore.backend = file\n' "$HOME/softhsm-tokens" > "$SOFTHSM2_CONF"
if [ -n "${1:-}" ]; then
    softhsm2-util --init-token --free --label "$1" --so-pin 87654321 --pin 12345678 >/dev/null
fi
