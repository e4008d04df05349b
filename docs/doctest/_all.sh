# Before every page: a reader who has set their PIN as hsmc.md shows (the built-in
# partition's user PIN), and a few files to sign.
export HSMC_PIN=12345678
mkdir -p dist
head -c 20000 /dev/urandom > dist/app-1.0.tar.gz
head -c 30000 /dev/urandom > dist/app-1.0.iso
cp dist/app-1.0.tar.gz dist/app.tar.gz
echo "release notes" > dist/notes.txt
