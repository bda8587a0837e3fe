# decode: one frame of bytes -> typed JSON-RPC messages (see decode.pyx).
