#include "common.h"
NDT_TEST(convolve_nd, placeholder) {}
