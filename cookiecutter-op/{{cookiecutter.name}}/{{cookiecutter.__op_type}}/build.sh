#!/bin/bash
# Build the {{ cookiecutter.__op_type }} operator package: build_out/custom_opp_<os>_<arch>.run
set -e
if [ -z "${ASCEND_HOME_PATH}" ]; then
    echo "ASCEND_HOME_PATH is not set: source <CANN>/set_env.sh first" >&2
    exit 1
fi
script_path=$(realpath "$(dirname "$0")")
cd "${script_path}"

opts=$(python3 -c 'import json; print(" ".join("-D{}={}".format(k, v["value"]) for k, v in json.load(open("CMakePresets.json"))["configurePresets"][0]["cacheVariables"].items()))')
opts=${opts//\/usr\/local\/Ascend\/latest/${ASCEND_HOME_PATH}}

rm -rf build_out
mkdir -p build_out
cd build_out
cmake .. ${opts}
cmake --build . --target all -j"$(nproc)"
cmake --build . --target package
