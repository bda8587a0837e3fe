# The pipeline's route lookup in C (routes_core.pyx): RoutesCore under
# mcpfast.server.middleware.pipeline._Routes.

cdef class RoutesCore:
    # The Router's table (method -> Route), and method -> (that Route, its wrapped Route).
    cdef public dict _base
    cdef public dict _wrapped
