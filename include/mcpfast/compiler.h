/*
 * Compiler hints shared by mcpfast's C headers: branch prediction, inlining.
 */
#ifndef MCPFAST_COMPILER_H
#define MCPFAST_COMPILER_H

#if defined(__GNUC__) || defined(__clang__)
#define MF_LIKELY(x) __builtin_expect(!!(x), 1)
#define MF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MF_NOINLINE __attribute__((noinline))
#define MF_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define MF_LIKELY(x) (x)
#define MF_UNLIKELY(x) (x)
#define MF_NOINLINE
#define MF_ALWAYS_INLINE static inline
#endif

#endif /* MCPFAST_COMPILER_H */
