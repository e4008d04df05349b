# The two commands of the README. Both set up what they need first (cheap when done).
.PHONY: run test setup lint bench

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
