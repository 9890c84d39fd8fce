/* The same programs alone and under mpirun (docs/internals.md "Several
 * processes"); run by tests/mpi/run_mpi_tests.sh.
 *
 *   mpi_programs ref FILE     alone (one process, one device): checks each
 *                             result against a plain C reference in
 *                             float64 and writes the results' bytes to FILE
 *   mpi_programs check FILE   under mpirun -n P: every rank computes the
 *                             same programs (arrays split over the ranks)
 *                             and compares with FILE: bitwise for
 *                             elementwise work, the stencil, random draws
 *                             and a transpose mixed with split arrays;
 *                             reductions and matmuls within 1e-12
 *                             (partials fold in rank order, a ring of B
 *                             blocks sums the inner dimension in blocks,
 *                             a replicated B multiplies row blocks); and the ranks compare their
 *                             results' hashes: every rank holds the same bits;
 *                             and nd_stats says which way the bytes went
 *                             (ND_RANK_STAGING, ND_RANK_LINK, ND_RANK_TRANSPORT)
 *   mpi_programs spmd         under mpirun with ND_CHECK_SPMD=1: rank 1
 *                             records another shape; every rank's nd_sync
 *                             must fail with ND_ERR_STATE naming rank 1
 *
 * Outputs are poisoned before nd_to_host; inputs come from the host (a
 * fixed LCG) or nd's generator (seeded alike on every rank). Exit 0 = pass. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "nd.h"

enum { ER = 61, EC = 29, SR = 53, SC = 41, SWEEPS = 20, RR = 47, RC = 31, TQ = 40, MB = 37, MS = 4, SYNCS = 4,
       ROUNDS = 3, GR = 400, GC = 400, N_OUT = 18 };

static double host_x[ER * EC], host_y[ER * EC], host_u[SR * SC], host_q[TQ * TQ], host_b[EC * MB], host_g[GR * GC];
static const size_t out_n[N_OUT] = {ER * EC, (ER / 2) * EC, SR * SC, EC, 1, ER, RR * RC, RR * RC, TQ * TQ, 1,
                                    ER * MB, ER * MS, SR * SC, ROUNDS, SR * SC, SR * SC, 2, 3};
/* Which outputs compare within tolerance: the reductions (over axis 0
 * partials fold in rank order; over axis 1 a row block sums alone, not in
 * the tiles of the whole array) and the matmuls. */
static const int out_tol[N_OUT] = {0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0};
static double *got[N_OUT];

static int failures;
#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "mpi_programs rank %d: ", my_rank);                 \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, "\n");                                              \
            failures++;                                                         \
        }                                                                       \
    } while (0)
static int my_rank;

static void fill_lcg(double *a, size_t n, uint64_t seed) {
    uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    }
}

static void take(int i, nd_array *a) {
    if (!a) {
        CHECK(0, "output %d: %s", i, nd_last_error());
        return;
    }
    size_t bytes = out_n[i] * sizeof(double);
    memset(got[i], 0x7f, bytes); /* poisoned: a missing write shows */
    CHECK(nd_size(a) == (int64_t)out_n[i], "output %d has %lld elements, not %zu", i, (long long)nd_size(a),
          out_n[i]);
    nd_status st = nd_to_host(a, got[i], bytes);
    CHECK(st == ND_OK, "output %d: nd_to_host: %s", i, nd_last_error());
}

/* n Jacobi sweeps of u's interior. */
static void sweeps(nd_array *u, int n) {
    for (int it = 0; it < n; it++) {
        nd_scope_begin();
        nd_array *c = nd_view(u, "1:-1, 1:-1");
        nd_array *sum = nd_add(nd_add(nd_add(nd_add(c, nd_view(u, ":-2, 1:-1")), nd_view(u, "2:, 1:-1")),
                                      nd_view(u, "1:-1, :-2")),
                               nd_view(u, "1:-1, 2:"));
        if (nd_assign(c, nd_mul(nd_scalar(0.2), sum)) != ND_OK) CHECK(0, "nd_assign: %s", nd_last_error());
        nd_scope_end();
    }
}

/* What the stencil over several syncs scattered and gathered after its
 * first sync, and what reading it gathered (output 12). */
static uint64_t sync_scatters, sync_gathers, read_gathers;
/* What reading three elements of a large split array gathered (output 17:
 * each read copies its bytes from the rank that holds them). */
static uint64_t element_gathers;

/* Every program, on whatever devices or ranks nd runs on. */
static void run_programs(void) {
    nd_scope_begin();
    /* Elementwise, with strided row views. */
    nd_array *x = nd_from_host(host_x, ND_FLOAT64, ND_SHAPE(ER, EC));
    nd_array *y = nd_from_host(host_y, ND_FLOAT64, ND_SHAPE(ER, EC));
    take(0, nd_sub(nd_add(nd_mul(nd_sin(x), nd_scalar(2.0)), nd_mul(x, y)), nd_scalar(1.0)));
    take(1, nd_add(nd_view(x, "1::2, :"), nd_view(y, ":-1:2, :")));
    /* A 5-point heat stencil: SWEEPS Jacobi sweeps of the interior. */
    nd_array *u = nd_from_host(host_u, ND_FLOAT64, ND_SHAPE(SR, SC));
    sweeps(u, SWEEPS);
    take(2, u);
    /* Reductions: over axis 0 (partials per rank), over everything, over
     * axis 1 (rows stay on their rank). */
    take(3, nd_sum(x, 0));
    take(4, nd_sum(x, ND_ALL_AXES));
    take(5, nd_mean(x, 1));
    /* Random draws: the same bits for any rank count. */
    nd_random_seed(1234);
    take(6, nd_random_uniform(ND_FLOAT64, ND_SHAPE(RR, RC), 0.0, 1.0));
    take(7, nd_random_normal(ND_FLOAT64, ND_SHAPE(RR, RC), 0.0, 1.0));
    /* A transpose moves axis 0: its input stays whole, next to split work. */
    nd_array *q = nd_from_host(host_q, ND_FLOAT64, ND_SHAPE(TQ, TQ));
    take(8, nd_add(nd_transpose(q, NULL), nd_mul(q, nd_scalar(3.0))));
    /* nd_item of a reduction over a stencil's result. */
    double item = nd_item(nd_max(u, ND_ALL_AXES));
    CHECK(nd_last_status() == ND_OK, "nd_item: %s", nd_last_error());
    got[9][0] = item;
    /* Matmuls of x's row blocks: a large B (EC x MB) in a ring of blocks
     * between the ranks, a small one (EC x MS) replicated on every rank. */
    nd_array *b = nd_from_host(host_b, ND_FLOAT64, ND_SHAPE(EC, MB));
    take(10, nd_matmul(nd_mul(x, nd_scalar(0.5)), b));
    take(11, nd_matmul(x, nd_from_host(host_b, ND_FLOAT64, ND_SHAPE(EC, MS))));
    /* The stencil again, one nd_sync per SWEEPS / SYNCS sweeps: each rank
     * keeps its piece between the syncs (split once, gathered once, by the
     * read), as one process keeps its devices' pieces. */
    nd_array *u2 = nd_from_host(host_u, ND_FLOAT64, ND_SHAPE(SR, SC));
    nd_stats s0, s1;
    for (int k = 0; k < SYNCS; k++) {
        if (k == 1) nd_get_stats(&s0); /* after the sync that split u2 */
        sweeps(u2, SWEEPS / SYNCS);
        CHECK(nd_sync() == ND_OK, "nd_sync: %s", nd_last_error());
    }
    nd_get_stats(&s1);
    sync_scatters = s1.arrays_scattered - s0.arrays_scattered;
    sync_gathers = s1.arrays_gathered - s0.arrays_gathered;
    take(12, u2);
    nd_get_stats(&s0);
    read_gathers = s0.arrays_gathered - s1.arrays_gathered;
    /* A convergence check: sweeps, then a sum read, per round. Each
     * round's plan has the halo exchange (on GPU ranks beside the kernels)
     * and a reduction's partials broadcast between the ranks. */
    nd_array *u3 = nd_from_host(host_u, ND_FLOAT64, ND_SHAPE(SR, SC));
    for (int k = 0; k < ROUNDS; k++) {
        sweeps(u3, SWEEPS / SYNCS);
        got[13][k] = nd_item(nd_sum(nd_mul(u3, u3), ND_ALL_AXES));
        CHECK(nd_last_status() == ND_OK, "round %d: nd_item: %s", k, nd_last_error());
    }
    take(14, u3);
    /* Element reads between sweeps (a collective gather under mpirun),
     * then sweeps that start from the pieces again. */
    nd_array *u4 = nd_from_host(host_u, ND_FLOAT64, ND_SHAPE(SR, SC));
    sweeps(u4, SWEEPS / SYNCS);
    got[16][0] = nd_item(nd_view(u4, "7, 3"));
    got[16][1] = nd_item(nd_view(u4, "40, 20"));
    CHECK(nd_last_status() == ND_OK, "element reads: %s", nd_last_error());
    sweeps(u4, SWEEPS / SYNCS);
    take(15, u4);
    /* Three elements of an array of over 1 MiB, split over the ranks and
     * not on any host: each read copies the bytes it needs from the rank
     * that holds them, nothing gathered. */
    nd_array *g = nd_add(nd_mul(nd_from_host(host_g, ND_FLOAT64, ND_SHAPE(GR, GC)), nd_scalar(2.0)), nd_scalar(1.0));
    CHECK(nd_sync() == ND_OK, "nd_sync: %s", nd_last_error());
    nd_get_stats(&s0);
    got[17][0] = nd_item(nd_view(g, "7, 3"));
    got[17][1] = nd_item(nd_view(g, "390, 5"));
    got[17][2] = nd_item(nd_view(g, "201, 399"));
    CHECK(nd_last_status() == ND_OK, "element reads of g: %s", nd_last_error());
    nd_get_stats(&s1);
    element_gathers = s1.arrays_gathered - s0.arrays_gathered;
    nd_scope_end();
}

/* The C reference, float64, for the ref run. */
static int near(double a, double b, double tol) { return fabs(a - b) <= tol * (1.0 + fabs(b)); }

/* n Jacobi sweeps of u's interior (SR x SC), in the order nd sums. */
static void reference_sweeps(double *u, int n) {
    static double v[SR * SC];
    for (int it = 0; it < n; it++) {
        memcpy(v, u, sizeof v);
        for (int r = 1; r < SR - 1; r++)
            for (int c = 1; c < SC - 1; c++)
                v[r * SC + c] = 0.2 * ((((u[r * SC + c] + u[(r - 1) * SC + c]) + u[(r + 1) * SC + c]) +
                                        u[r * SC + c - 1]) + u[r * SC + c + 1]);
        memcpy(u, v, sizeof v);
    }
}

static void check_reference(void) {
    for (int i = 0; i < ER * EC; i++)
        CHECK(near(got[0][i], sin(host_x[i]) * 2.0 + host_x[i] * host_y[i] - 1.0, 1e-14), "elementwise [%d]", i);
    for (int r = 0; r < ER / 2; r++)
        for (int c = 0; c < EC; c++)
            CHECK(got[1][r * EC + c] == host_x[(1 + 2 * r) * EC + c] + host_y[2 * r * EC + c], "views [%d,%d]", r, c);
    static double u[SR * SC];
    memcpy(u, host_u, sizeof u);
    reference_sweeps(u, SWEEPS);
    double mx = -INFINITY;
    for (int i = 0; i < SR * SC; i++) {
        CHECK(near(got[2][i], u[i], 1e-13), "stencil [%d]: %g, want %g", i, got[2][i], u[i]);
        if (u[i] > mx) mx = u[i];
    }
    double all = 0;
    for (int c = 0; c < EC; c++) {
        double s = 0;
        for (int r = 0; r < ER; r++) s += host_x[r * EC + c];
        all += s;
        CHECK(near(got[3][c], s, 1e-12), "sum axis 0 [%d]", c);
    }
    CHECK(near(got[4][0], all, 1e-12), "sum: %.17g, want %.17g", got[4][0], all);
    for (int r = 0; r < ER; r++) {
        double s = 0;
        for (int c = 0; c < EC; c++) s += host_x[r * EC + c];
        CHECK(near(got[5][r], s / EC, 1e-12), "mean axis 1 [%d]", r);
    }
    double m6 = 0, m7 = 0, v7 = 0;
    for (int i = 0; i < RR * RC; i++) {
        CHECK(got[6][i] >= 0.0 && got[6][i] < 1.0, "uniform [%d] = %g", i, got[6][i]);
        m6 += got[6][i];
        m7 += got[7][i];
        v7 += got[7][i] * got[7][i];
    }
    m6 /= RR * RC, m7 /= RR * RC, v7 /= RR * RC;
    CHECK(fabs(m6 - 0.5) < 0.03 && fabs(m7) < 0.06 && fabs(v7 - 1.0) < 0.1, "random moments %g %g %g", m6, m7, v7);
    for (int r = 0; r < TQ; r++)
        for (int c = 0; c < TQ; c++)
            /* Exactly the sum, rounded once (a CUDA kernel contracts it into
             * an fma) or twice (the CPU backend). */
            CHECK(got[8][r * TQ + c] == host_q[c * TQ + r] + host_q[r * TQ + c] * 3.0 ||
                      got[8][r * TQ + c] == fma(host_q[r * TQ + c], 3.0, host_q[c * TQ + r]),
                  "transpose [%d,%d]", r, c);
    CHECK(got[9][0] == mx, "nd_item max %.17g, want %.17g", got[9][0], mx);
    CHECK(!memcmp(got[12], got[2], sizeof(double) * SR * SC), "the stencil over %d syncs differs from one sync's",
          SYNCS);
    /* The rounds: the same sweeps, a sum of squares after each SWEEPS / SYNCS. */
    memcpy(u, host_u, sizeof u);
    for (int k = 0; k < ROUNDS; k++) {
        reference_sweeps(u, SWEEPS / SYNCS);
        double sq = 0;
        for (int i = 0; i < SR * SC; i++) sq += u[i] * u[i];
        CHECK(near(got[13][k], sq, 1e-12), "round %d: sum of squares %.17g, want %.17g", k, got[13][k], sq);
    }
    for (int i = 0; i < SR * SC; i++) CHECK(near(got[14][i], u[i], 1e-13), "rounds' stencil [%d]", i);
    memcpy(u, host_u, sizeof u);
    reference_sweeps(u, SWEEPS / SYNCS);
    CHECK(near(got[16][0], u[7 * SC + 3], 1e-13) && near(got[16][1], u[40 * SC + 20], 1e-13),
          "element reads %.17g %.17g, want %.17g %.17g", got[16][0], got[16][1], u[7 * SC + 3], u[40 * SC + 20]);
    reference_sweeps(u, SWEEPS / SYNCS);
    for (int i = 0; i < SR * SC; i++) CHECK(near(got[15][i], u[i], 1e-13), "stencil after element reads [%d]", i);
    const int at[3][2] = {{7, 3}, {390, 5}, {201, 399}};
    for (int k = 0; k < 3; k++)
        CHECK(got[17][k] == host_g[at[k][0] * GC + at[k][1]] * 2.0 + 1.0, "g[%d, %d] = %.17g", at[k][0], at[k][1],
              got[17][k]);
    for (int r = 0; r < ER; r++)
        for (int c = 0; c < MB; c++) {
            double s = 0, s4 = 0;
            for (int k = 0; k < EC; k++) s += host_x[r * EC + k] * 0.5 * host_b[k * MB + c];
            for (int k = 0; k < EC && c < MS; k++) s4 += host_x[r * EC + k] * host_b[k * MS + c];
            CHECK(near(got[10][r * MB + c], s, 1e-12), "matmul (ring) [%d,%d]", r, c);
            if (c < MS) CHECK(near(got[11][r * MS + c], s4, 1e-12), "matmul (replica) [%d,%d]", r, c);
        }
}

static uint64_t fnv(const void *p, size_t n, uint64_t h) {
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

static int spmd(void) {
    /* Rank 1 records an array of another shape: plans differ. */
    nd_scope_begin();
    nd_array *a = nd_ones(ND_FLOAT64, ND_SHAPE(my_rank == 1 ? 30 : 31, 8));
    nd_array *b = nd_add(nd_mul(a, nd_scalar(2.0)), nd_scalar(1.0));
    double out[31 * 8];
    nd_status st = nd_to_host(b, out, sizeof(double) * (size_t)nd_size(b));
    const char *why = nd_last_error();
    CHECK(st == ND_ERR_STATE, "the plans differ, yet nd_to_host gave %s (%s)", nd_status_name(st), why);
    CHECK(strstr(why, "ND_CHECK_SPMD") && strstr(why, "rank 1:"), "the message does not name ND_CHECK_SPMD and "
          "rank 1: %s", why);
    if (my_rank == 0) fprintf(stderr, "mpi_programs spmd: rank 0 was told: %s\n", why);
    nd_scope_end();
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: mpi_programs ref FILE | check FILE | spmd\n");
        return 2;
    }
    const char *mode = argv[1];
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "mpi_programs: nd_init: %s\n", nd_last_error());
        return 1;
    }
    int ranks = 1, inited = 0;
    MPI_Initialized(&inited);
    if (inited) {
        MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    }
    if (!strcmp(mode, "spmd")) {
        if (ranks < 2) {
            fprintf(stderr, "mpi_programs spmd: run under mpirun -n 2 or more\n");
            return 2;
        }
        return spmd();
    }
    if (argc < 3) return 2;
    int ref = !strcmp(mode, "ref");
    if (ref == (ranks > 1)) {
        fprintf(stderr, "mpi_programs: 'ref' runs alone, 'check' under mpirun -n 2 or more (%d ranks here)\n", ranks);
        return 2;
    }
    fill_lcg(host_x, ER * EC, 1);
    fill_lcg(host_y, ER * EC, 2);
    fill_lcg(host_u, SR * SC, 3);
    fill_lcg(host_q, TQ * TQ, 4);
    fill_lcg(host_b, EC * MB, 5);
    fill_lcg(host_g, GR * GC, 6);
    for (int i = 0; i < N_OUT; i++) got[i] = malloc(out_n[i] * sizeof(double));
    run_programs();
    if (ref) {
        check_reference();
        FILE *f = fopen(argv[2], "wb");
        for (int i = 0; f && i < N_OUT; i++) fwrite(got[i], sizeof(double), out_n[i], f);
        CHECK(f && fclose(f) == 0, "cannot write %s", argv[2]);
    } else {
        nd_stats s;
        nd_get_stats(&s);
        CHECK(s.device_kernels > 0 && s.halo_copies > 0, "nothing split over the ranks (%llu device kernels, %llu "
              "halo copies)", (unsigned long long)s.device_kernels, (unsigned long long)s.halo_copies);
        /* On CUDA the flush that uploads a host array keeps it whole
         * (docs/internals.md, "Several devices"), and the matmuls' operands
         * are uploaded in the flush that multiplies them: the split of a
         * matmul is checked on CPU ranks (the values on both). */
        int cuda = strcmp(nd_backend_name(), "cuda") == 0;
        CHECK(cuda || (s.device_matmuls > 0 && s.ring_copies > 0 && s.matmul_replicas > 0), "the matmuls did not "
              "split (%llu device matmuls, %llu ring copies, %llu replicas)", (unsigned long long)s.device_matmuls,
              (unsigned long long)s.ring_copies, (unsigned long long)s.matmul_replicas);
        CHECK(element_gathers == 0, "reading three elements of a split array gathered %llu arrays",
              (unsigned long long)element_gathers);
        CHECK(sync_scatters == 0 && sync_gathers == 0 && read_gathers == 1, "the stencil's syncs after its first "
              "scattered %llu arrays and gathered %llu, and its read gathered %llu: its pieces did not stay on their "
              "ranks between the syncs", (unsigned long long)sync_scatters, (unsigned long long)sync_gathers,
              (unsigned long long)read_gathers);
        /* GPU ranks send over NCCL (ND_RANK_TRANSPORT=nccl, or auto where
         * each rank has a GPU of its own) or through host buffers (also CPU
         * ranks under ND_RANK_STAGING=1); CPU ranks send over the CPU test
         * link under ND_RANK_LINK=1 (counted with NCCL's bytes: the link's),
         * else their memory in place. Never two ways in one run. */
        const char *staging = getenv("ND_RANK_STAGING"), *transport = getenv("ND_RANK_TRANSPORT");
        const char *test_link = getenv("ND_RANK_LINK");
        int cpu = strcmp(nd_backend_name(), "cpu") == 0;
        int nccl = cpu ? test_link && !strcmp(test_link, "1")
                       : transport && !strcmp(transport, "nccl") ? 1
                       : transport && !strcmp(transport, "staging") ? 0 : s.rank_bytes_nccl > 0;
        int staged = !nccl && ((staging && !strcmp(staging, "1")) || !cpu);
        CHECK(staged ? s.rank_bytes_staged > 0 : s.rank_bytes_staged == 0, "%llu bytes staged through host "
              "buffers on the %s backend (ND_RANK_STAGING %s, ND_RANK_TRANSPORT %s)",
              (unsigned long long)s.rank_bytes_staged, nd_backend_name(), staging ? staging : "unset",
              transport ? transport : "unset");
        CHECK(nccl ? s.rank_bytes_nccl > 0 : s.rank_bytes_nccl == 0, "%llu bytes over the link (NCCL) on the %s "
              "backend (ND_RANK_TRANSPORT %s, ND_RANK_LINK %s)", (unsigned long long)s.rank_bytes_nccl,
              nd_backend_name(), transport ? transport : "unset", test_link ? test_link : "unset");
        FILE *f = fopen(argv[2], "rb");
        CHECK(f != NULL, "cannot read %s", argv[2]);
        uint64_t h = 1469598103934665603ull;
        for (int i = 0; f && i < N_OUT; i++) {
            double *want = malloc(out_n[i] * sizeof(double));
            CHECK(fread(want, sizeof(double), out_n[i], f) == out_n[i], "%s is short", argv[2]);
            for (size_t j = 0; j < out_n[i]; j++) {
                int ok = out_tol[i] ? near(got[i][j], want[j], 1e-12) : !memcmp(&got[i][j], &want[j], sizeof(double));
                if (!ok) {
                    CHECK(0, "output %d [%zu]: %.17g on %d ranks, %.17g alone", i, j, got[i][j], ranks, want[j]);
                    break;
                }
            }
            h = fnv(got[i], out_n[i] * sizeof(double), h);
            free(want);
        }
        if (f) fclose(f);
        /* nd is done here: a rank that stopped recording early (its records
         * failed) tells the others at nd_shutdown under ND_CHECK_SPMD, so they
         * fail their plans instead of waiting for it while it waits below. */
        char backend[16];
        snprintf(backend, sizeof backend, "%s", nd_backend_name()); /* nd_backend_name would start nd again */
        nd_shutdown();
        /* Every rank holds the same bits, reductions included. */
        uint64_t lo = h, hi = h;
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
        CHECK(lo == hi, "the ranks hold different results (hashes differ)");
        if (my_rank == 0)
            printf("mpi_programs: %d ranks on the %s backend: %llu device kernels, %llu halo copies, %llu device "
                   "matmuls, %llu ring copies, %llu replicas, %llu bytes staged and %llu over the link on rank 0\n",
                   ranks, backend, (unsigned long long)s.device_kernels,
                   (unsigned long long)s.halo_copies, (unsigned long long)s.device_matmuls,
                   (unsigned long long)s.ring_copies, (unsigned long long)s.matmul_replicas,
                   (unsigned long long)s.rank_bytes_staged, (unsigned long long)s.rank_bytes_nccl);
    }
    for (int i = 0; i < N_OUT; i++) free(got[i]);
    if (!failures && my_rank == 0) printf("mpi_programs %s: ok\n", mode);
    return failures ? 1 : 0;
}
