/* warpwise_builtins.h: GCC's predefined type names that lang-c does not know, included
   before every file so that they parse as type names. The lowering gives them their real
   meaning (128-bit integers); only the spelling matters here. */
typedef long long __int128;
typedef long long __int128_t;
typedef unsigned long long __uint128_t;
