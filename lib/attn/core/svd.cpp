// LAPACK through its Fortran ABI (column-major, every argument by pointer, hidden string lengths
// not needed for one-character arguments on the Debian build): kept to this file. liblapack.so.3
// is loaded the first time an SVD is taken, not at every start of the program: Debian's default
// LAPACK is often OpenBLAS, which brings libgfortran and starts its thread pool when loaded.
// A static executable (CMakeLists.txt: ATTN_STATIC_PIE) has LAPACK linked in instead: a library it
// loaded with dlopen would bring its own C library, in which OpenBLAS's threads cannot start.
#include "attn/core/svd.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#include <dlfcn.h>

#include "attn/core/error.hpp"

// The two pieces of the Fortran runtime dgesvd_ calls, for when LAPACK is linked into the static
// executable without gfortran's runtime (libgfortran.a registers an exit-time flush of its I/O
// units, which crashed a static program): xerbla_, which reference LAPACK calls on an illegal
// argument to print it and stop (here it returns, and dgesvd_ reports it through `info`, which
// run_svd checks), and _gfortran_concat_string, Fortran's `//` (ilaenv joins routine names with
// it): dest[0, destlen) = s1 then s2, cut or padded with blanks. A program that loads LAPACK with
// dlopen never exports these, so the library keeps its own.
extern "C" void xerbla_(const char* /*name*/, const int* /*info*/, std::size_t /*name_length*/) {}
extern "C" void _gfortran_concat_string(std::size_t destlen, char* dest, std::size_t len1, const char* s1,
                                        std::size_t len2, const char* s2) {
    const std::size_t a = std::min(len1, destlen), b = std::min(len2, destlen - a);
    std::memcpy(dest, s1, a);
    std::memcpy(dest + a, s2, b);
    std::memset(dest + a + b, ' ', destlen - a - b);
}

// Defined when LAPACK is linked into the executable (its static link names it with -u), else null.
extern "C" void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a, const int* lda,
                        double* s, double* u, const int* ldu, double* vt, const int* ldvt, double* work,
                        const int* lwork, int* info) __attribute__((weak));

namespace attn {

namespace {
using svd_dgesvd_fn = void (*)(const char* jobu, const char* jobvt, const int* m, const int* n, double* a,
                               const int* lda, double* s, double* u, const int* ldu, double* vt, const int* ldvt,
                               double* work, const int* lwork, int* info);

svd_dgesvd_fn svd_load_dgesvd() {
    if (&dgesvd_ != nullptr) return &dgesvd_;  // linked in
    void* lib = dlopen("liblapack.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* why = dlerror();
        throw error(std::string("the SVD needs LAPACK's liblapack.so.3 (apt install liblapack3): ") +
                    (why ? why : "not found"));
    }
    auto f = reinterpret_cast<svd_dgesvd_fn>(dlsym(lib, "dgesvd_"));
    if (!f) throw error("liblapack.so.3 has no dgesvd_: reinstall liblapack3");
    return f;  // never dlclose'd: the process keeps it, as it would a linked library
}

// LAPACK's dgesvd, loaded on the first call (a failure is retried on the next).
void svd_dgesvd(const char* jobu, const char* jobvt, const int* m, const int* n, double* a, const int* lda, double* s,
                double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* info) {
    static const svd_dgesvd_fn f = svd_load_dgesvd();
    f(jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, info);
}

struct svd_parts {
    std::vector<double> s, u, vt;  // u: [r, p] column-major, vt: [p, c] column-major, p = min(r, c)
};

svd_parts run_svd(const matrix<double>& a, bool vectors) {
    const int r = static_cast<int>(a.shape(0)), c = static_cast<int>(a.shape(1)), p = std::min(r, c);
    std::vector<double> col(static_cast<std::size_t>(r) * static_cast<std::size_t>(c));
    for (int i = 0; i < r; ++i)
        for (int j = 0; j < c; ++j)
            col[static_cast<std::size_t>(j) * static_cast<std::size_t>(r) + static_cast<std::size_t>(i)] =
                a(static_cast<std::size_t>(i), static_cast<std::size_t>(j));
    svd_parts out;
    out.s.resize(static_cast<std::size_t>(p));
    const char job = vectors ? 'S' : 'N';
    const int ldu = std::max(1, r), ldvt = std::max(1, p);
    if (vectors)
        out.u.resize(static_cast<std::size_t>(r) * static_cast<std::size_t>(p)),
            out.vt.resize(static_cast<std::size_t>(p) * static_cast<std::size_t>(c));
    else
        out.u.resize(1), out.vt.resize(1);
    int info = 0, lwork = -1;
    double query = 0;
    svd_dgesvd(&job, &job, &r, &c, col.data(), &r, out.s.data(), out.u.data(), &ldu, out.vt.data(), &ldvt, &query,
               &lwork, &info);
    lwork = static_cast<int>(query);
    std::vector<double> work(static_cast<std::size_t>(std::max(lwork, 1)));
    svd_dgesvd(&job, &job, &r, &c, col.data(), &r, out.s.data(), out.u.data(), &ldu, out.vt.data(), &ldvt, work.data(),
               &lwork, &info);
    if (info != 0) throw std::runtime_error("LAPACK dgesvd did not converge");
    return out;
}
}  // namespace

std::vector<double> singular_values(const matrix<double>& a) {
    if (a.size() == 0) return {};
    return run_svd(a, false).s;
}

matrix<double> low_rank(const matrix<double>& a, std::size_t k) {
    const std::size_t r = a.shape(0), c = a.shape(1), p = std::min(r, c);
    const svd_parts d = run_svd(a, true);
    matrix<double> out = xt::zeros<double>({r, c});
    for (std::size_t t = 0; t < std::min(k, p); ++t)
        for (std::size_t i = 0; i < r; ++i)
            for (std::size_t j = 0; j < c; ++j) out(i, j) += d.u[t * r + i] * d.s[t] * d.vt[j * p + t];
    return out;
}

}  // namespace attn
