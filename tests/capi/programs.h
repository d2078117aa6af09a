/* HLO programs more than one C test runs. Include only where used (an
 * unused static array is a warning). */
#ifndef KILN_TESTS_CAPI_PROGRAMS_H_
#define KILN_TESTS_CAPI_PROGRAMS_H_

/* Counts i up from 0 while i != n: for n = -1 it would take 2^64 iterations. */
static const char kCountTo[] =
    "HloModule count_to\n"
    "cond {\n"
    "  s = (s64[], s64[]) parameter(0)\n"
    "  i = s64[] get-tuple-element(s), index=0\n"
    "  n = s64[] get-tuple-element(s), index=1\n"
    "  ROOT ne = pred[] compare(i, n), direction=NE\n"
    "}\n"
    "body {\n"
    "  s = (s64[], s64[]) parameter(0)\n"
    "  i = s64[] get-tuple-element(s), index=0\n"
    "  n = s64[] get-tuple-element(s), index=1\n"
    "  one = s64[] constant(1)\n"
    "  next = s64[] add(i, one)\n"
    "  ROOT t = (s64[], s64[]) tuple(next, n)\n"
    "}\n"
    "ENTRY e {\n"
    "  n = s64[] parameter(0)\n"
    "  zero = s64[] constant(0)\n"
    "  init = (s64[], s64[]) tuple(zero, n)\n"
    "  loop = (s64[], s64[]) while(init), condition=cond, body=body\n"
    "  ROOT count = s64[] get-tuple-element(loop), index=0\n"
    "}\n";

#endif /* KILN_TESTS_CAPI_PROGRAMS_H_ */
