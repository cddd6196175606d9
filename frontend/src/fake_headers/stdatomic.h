/* warpwise wrapper for <stdatomic.h>: the compiler's own header, then its generic macros
 * redefined without `__auto_type` (GCC's versions declare `__auto_type` temporaries inside
 * statement expressions, which the lang-c parser rejects). Each becomes the `__atomic_*`
 * builtin it stands for, with the same arguments and result: only how the text parses
 * changes. Only for analysis: warpwise never compiles with this header. */
#include_next <stdatomic.h>

#undef atomic_init
#define atomic_init(PTR, VAL) __atomic_store_n((PTR), (VAL), __ATOMIC_RELAXED)
#undef kill_dependency
#define kill_dependency(Y) (Y)
#undef atomic_store_explicit
#define atomic_store_explicit(PTR, VAL, MO) __atomic_store_n((PTR), (VAL), (MO))
#undef atomic_store
#define atomic_store(PTR, VAL) __atomic_store_n((PTR), (VAL), __ATOMIC_SEQ_CST)
#undef atomic_load_explicit
#define atomic_load_explicit(PTR, MO) __atomic_load_n((PTR), (MO))
#undef atomic_load
#define atomic_load(PTR) __atomic_load_n((PTR), __ATOMIC_SEQ_CST)
#undef atomic_exchange_explicit
#define atomic_exchange_explicit(PTR, VAL, MO) __atomic_exchange_n((PTR), (VAL), (MO))
#undef atomic_exchange
#define atomic_exchange(PTR, VAL) __atomic_exchange_n((PTR), (VAL), __ATOMIC_SEQ_CST)
#undef atomic_compare_exchange_strong_explicit
#define atomic_compare_exchange_strong_explicit(PTR, VAL, DES, SUC, FAIL) \
  __atomic_compare_exchange_n((PTR), (VAL), (DES), 0, (SUC), (FAIL))
#undef atomic_compare_exchange_strong
#define atomic_compare_exchange_strong(PTR, VAL, DES) \
  __atomic_compare_exchange_n((PTR), (VAL), (DES), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
#undef atomic_compare_exchange_weak_explicit
#define atomic_compare_exchange_weak_explicit(PTR, VAL, DES, SUC, FAIL) \
  __atomic_compare_exchange_n((PTR), (VAL), (DES), 1, (SUC), (FAIL))
#undef atomic_compare_exchange_weak
#define atomic_compare_exchange_weak(PTR, VAL, DES) \
  __atomic_compare_exchange_n((PTR), (VAL), (DES), 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
#undef atomic_flag_test_and_set
#define atomic_flag_test_and_set(PTR) __atomic_test_and_set((PTR), __ATOMIC_SEQ_CST)
#undef atomic_flag_test_and_set_explicit
#define atomic_flag_test_and_set_explicit(PTR, MO) __atomic_test_and_set((PTR), (MO))
