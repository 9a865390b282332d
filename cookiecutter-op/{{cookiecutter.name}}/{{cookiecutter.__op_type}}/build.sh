#!/bin/bash
# Build the {{ cookiecutter.__op_type }} operator package, build_out/custom_opp_<os>_<arch>.run, as
# msOpGen 26.0.0's build.sh does. Unlike it, this script works from any directory, and it builds
# against the CANN that set_env.sh selected (ASCEND_HOME_PATH) rather than the path in CMakePresets.json.
set -e
if [ -n "${BASE_LIBS_PATH}" ]; then
    export ASCEND_HOME_PATH=${BASE_LIBS_PATH}
elif [ -z "${ASCEND_HOME_PATH}" ] && [ -n "${ASCEND_AICPU_PATH}" ]; then
    export ASCEND_HOME_PATH=${ASCEND_AICPU_PATH}
fi
if [ -z "${ASCEND_HOME_PATH}" ]; then
    echo "ASCEND_HOME_PATH is not set: source <CANN>/set_env.sh first" >&2
    exit 1
fi
echo "using ASCEND_HOME_PATH: ${ASCEND_HOME_PATH}"
cd "$(dirname "$(realpath "$0")")"

build_dir=build_out
mkdir -p "${build_dir}"
rm -rf "${build_dir:?}"/*
cann_path="-DASCEND_CANN_PACKAGE_PATH=${ASCEND_HOME_PATH}"
cmake_version=$(cmake --version | awk '/cmake version/ {print $3}')
if [ "$(printf '%s\n' "3.19.0" "${cmake_version}" | sort -V | head -n1)" != "3.19.0" ]; then
    # CMake before 3.19 has no presets: CANN's preset_parse.py turns them into -D options.
    opts=$(python3 "${ASCEND_HOME_PATH}/tools/tikcpp/ascendc_kernel_cmake/fwk_modules/util/preset_parse.py" CMakePresets.json)
    cmake -S . -B "${build_dir}" ${opts} "${cann_path}"
else
    cmake -S . -B "${build_dir}" --preset=default "${cann_path}"
fi
cmake --build "${build_dir}" --target binary package -j"$(nproc)"
