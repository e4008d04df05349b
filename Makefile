# The two commands of the README. Both set up what they need first (cheap when done).
.PHONY: run test setup lint bench bindings deb

run:
	scripts/setup.sh run
	scripts/run.sh

test:
	scripts/setup.sh test
	scripts/test.sh

setup:
	scripts/setup.sh test

lint:
	scripts/test.sh lint

bench:
	scripts/bench.sh

# Regenerate what the IPC surface generates — ui/src/bindings.ts, ui/src/commands.ts,
# permissions/console.toml — from the Rust side (a test fails while any is stale).
bindings:
	UPDATE_BINDINGS=1 cargo test -q -p hsm-console --lib ipc

# The Debian package of the desktop app (target/release/bundle/deb/).
deb:
	scripts/setup.sh run
	scripts/build-deb.sh
