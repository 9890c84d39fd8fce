/* Included first by the files holding tile loops. GCC refuses to if-convert
 * (and so to vectorise) a floating-point select while it must preserve
 * floating-point traps; nd never enables traps, so those loops are built
 * without trapping-math and at -O3 whatever the build type. Clang vectorises
 * them as they are. */
#ifndef ND_BACKENDS_CPU_VECTORIZE_H
#define ND_BACKENDS_CPU_VECTORIZE_H
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#endif
