# What buildkite-plugin-tester's /usr/lib/bats/load.bash provides, for
# machines without its Docker image (Debian has bats-support, bats-assert
# and bats-file, but no bats-mock): the plugin's tests in tests/*.bats load
# "${BATS_PLUGIN_PATH:-tests/lib}/load.bash" and run the same either way.
bats_load_library bats-support
bats_load_library bats-assert
bats_load_library bats-file
# shellcheck source-path=SCRIPTDIR source=stub.bash
source "${BASH_SOURCE[0]%/*}/stub.bash"
