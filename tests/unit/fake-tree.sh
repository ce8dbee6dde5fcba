# Fake sysfs trees for shell tests; mirrors tests/unit/fake-tree.c.
# node0: CPUs 0-3 (cores {0,2},{1,3}); node1: CPUs 4-7 (cores {4,6},{5,7});
# node2: CPU-less, nearest to node1. 128 MiB blocks; 0-15 online at boot.

fake_block() {  # root id node state valid_zones
        d="$1/devices/system/memory/memory$2"
        mkdir -p "$d"
        echo "$4" > "$d/state"
        echo "$5" > "$d/valid_zones"
        printf '%08x\n' "$2" > "$d/phys_index"
        echo 1 > "$d/removable"
        if [ "$3" -ge 0 ]; then
                ln -s "../../node/node$3" "$d/node$3"
                mkdir -p "$1/devices/system/node/node$3"
                ln -s "../../memory/memory$2" "$1/devices/system/node/node$3/memory$2"
        fi
}

fake_cpu() {  # root cpu node siblings
        d="$1/devices/system/cpu/cpu$2"
        mkdir -p "$d/topology"
        echo 1 > "$d/online"
        echo "$4" > "$d/topology/thread_siblings_list"
        ln -s "../../node/node$3" "$d/node$3"
}

fake_node() {  # root node cpulist distance
        d="$1/devices/system/node/node$2"
        mkdir -p "$d"
        echo "$3" > "$d/cpulist"
        echo "$4" > "$d/distance"
}

fake_standard_machine() {  # root
        r="$1"
        mkdir -p "$r/devices/system/memory" "$r/devices/system/cpu" "$r/devices/system/node"
        printf '8000000\n' > "$r/devices/system/memory/block_size_bytes"
        echo offline > "$r/devices/system/memory/auto_online_blocks"
        echo 0-7 > "$r/devices/system/cpu/online"
        echo 0-7 > "$r/devices/system/cpu/possible"
        echo 0-7 > "$r/devices/system/cpu/present"
        echo > "$r/devices/system/cpu/isolated"
        echo 0-2 > "$r/devices/system/node/online"
        echo 0-2 > "$r/devices/system/node/possible"
        fake_node "$r" 0 0-3 "10 20 30"
        fake_node "$r" 1 4-7 "20 10 17"
        fake_node "$r" 2 "" "30 17 10"
        fake_cpu "$r" 0 0 0,2; fake_cpu "$r" 1 0 1,3; fake_cpu "$r" 2 0 0,2; fake_cpu "$r" 3 0 1,3
        fake_cpu "$r" 4 1 4,6; fake_cpu "$r" 5 1 5,7; fake_cpu "$r" 6 1 4,6; fake_cpu "$r" 7 1 5,7
        for b in 0 1 2 3 4 5 6 7; do fake_block "$r" $b 0 online Normal; done
        for b in 8 9 10 11 12 13 14 15; do fake_block "$r" $b 1 online Normal; done
}
