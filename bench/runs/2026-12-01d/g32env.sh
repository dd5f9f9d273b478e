# Sourced by this session's run scripts: where the 32 GiB run keeps its
# work and parameters on the device. /tmp is used when it is a real disk;
# on a tmpfs (47 GiB of parameters in RAM) the home directory is used.
if [ -d "$HOME/cuzk-32g" ] || [ "$(df --output=fstype /tmp | tail -n 1 | tr -d ' ')" = tmpfs ]; then
    export WORK="$HOME/cuzk-32g" PARAMS="$HOME/fil-params"
else
    export WORK=/tmp/cuzk-32g PARAMS=/tmp/fil-params
fi
