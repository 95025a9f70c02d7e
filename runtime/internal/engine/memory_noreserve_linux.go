package engine

import "syscall"

const mapNoReserve = syscall.MAP_NORESERVE
