# Compiled JSON encoding of Python values and JSON-RPC 2.0 messages (see encode.pyx).
# Cython modules cimport these to call the encoder without a Python-level call.

cpdef bytes dumps(object value)
cpdef bytes encode_request(object id, object method, object params=*)
cpdef bytes encode_notification(object method, object params=*)
cpdef bytes encode_response(object id, object result)
cpdef bytes encode_error(object id, object code, object message, object data=*)
cpdef bytes encode_message(object message)
cpdef bytes encode_batch(object items)
cpdef object error_code_of(object frame)


# Members appended to a dict as they were encoded once (see encode.pyx).
cdef class Extension:
    cdef readonly bytes text
    cdef readonly tuple keys
    cdef readonly object otherwise
    cdef int nesting
    cdef bint overlaps(self, dict value) except -1


cdef class Extended:
    cdef readonly object value
    cdef readonly Extension extension


# encode_response(id, extension(result)) without the Extended value in between.
cdef bytes encode_extended_response(object id, object result, Extension extension)
