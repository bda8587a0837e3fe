# The wall clock the telemetry's compiled modules read: what time.time_ns() returns (on
# POSIX, clock_gettime(CLOCK_REALTIME)), without a Python call per reading.

from libc.time cimport time_t
from posix.time cimport CLOCK_REALTIME, clock_gettime, timespec


cdef inline long long wall_ns() noexcept nogil:
    cdef timespec now
    clock_gettime(CLOCK_REALTIME, &now)
    return <long long>now.tv_sec * 1000000000 + now.tv_nsec
