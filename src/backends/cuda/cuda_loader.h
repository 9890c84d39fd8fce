/* The CUDA libraries (runtime, NVRTC, cuBLAS), loaded with dlopen when the
 * CUDA backend starts rather than linked: one libnd serves machines with
 * and without CUDA, and a program on the CPU backend never maps them.
 *
 * Each library's functions are one list below (an X-macro row per
 * function). The backend's files call them by their usual names: the
 * redirects at the end of this header turn `cudaMalloc(...)` into a call
 * through the table the loader filled. The two lists cannot drift apart:
 * a function called but not listed is an undefined symbol when libnd
 * links (it no longer links the CUDA libraries), and a redirect without a
 * row is a compile error.
 *
 * Adding a CUDA call: add its row to its library's list and a redirect
 * (#undef name / #define name ND_CUDA_FN(name)) below. */
#ifndef ND_BACKENDS_CUDA_LOADER_H
#define ND_BACKENDS_CUDA_LOADER_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <cusolverDn.h>
#include <nvrtc.h>

#include "nd.h"

#define ND_CUDART_FNS(X)                                                                                \
    X(cudaDeviceGetAttribute) X(cudaEventCreate) X(cudaEventCreateWithFlags) X(cudaEventDestroy)        \
    X(cudaEventElapsedTime) X(cudaEventRecord) X(cudaEventSynchronize) X(cudaFree) X(cudaFreeAsync)     \
    X(cudaFreeHost) X(cudaFuncGetAttributes) X(cudaGetDeviceCount) X(cudaGetDeviceProperties)           \
    X(cudaGetErrorName) X(cudaGetErrorString) X(cudaGetLastError) X(cudaGraphDestroy)                   \
    X(cudaGraphExecDestroy) X(cudaGraphExecUpdate) X(cudaGraphInstantiate) X(cudaGraphLaunch)           \
    X(cudaLaunchKernel) X(cudaLaunchKernelExC) X(cudaLibraryGetKernel) X(cudaLibraryLoadData)           \
    X(cudaLibraryUnload) X(cudaMalloc) X(cudaMallocFromPoolAsync) X(cudaMallocHost) X(cudaMemGetInfo)   \
    X(cudaMemPoolCreate) X(cudaMemPoolDestroy) X(cudaMemPoolSetAttribute) X(cudaMemPoolTrimTo)          \
    X(cudaMemcpyAsync) X(cudaMemcpy2DAsync) X(cudaMemsetAsync) X(cudaMemset2DAsync) X(cudaPointerGetAttributes) X(cudaSetDevice) X(cudaStreamBeginCapture)           \
    X(cudaStreamCreateWithFlags) X(cudaStreamDestroy) X(cudaStreamEndCapture) X(cudaStreamSynchronize)  \
    X(cudaStreamQuery) \
    X(cudaStreamWaitEvent) X(cudaDriverGetVersion) X(cudaRuntimeGetVersion) X(cudaGetDevice)          \
    X(cudaMemPoolGetAttribute) X(cudaStreamIsCapturing) X(cudaMemcpyPeerAsync) X(cudaDeviceCanAccessPeer)  \
    X(cudaDeviceEnablePeerAccess) X(cudaMemPoolSetAccess) X(cudaDeviceGetStreamPriorityRange)          \
    X(cudaStreamCreateWithPriority) X(cudaIpcGetMemHandle) X(cudaIpcOpenMemHandle) X(cudaIpcCloseMemHandle)   \
    ND_CUDART_FNS_12050(X) ND_CUDART_FNS_12080(X)

/* Functions newer toolkits have (their callers check CUDART_VERSION too). */
#if CUDART_VERSION >= 12050
#define ND_CUDART_FNS_12050(X) X(cudaGetDriverEntryPointByVersion)
#else
#define ND_CUDART_FNS_12050(X)
#endif
#if CUDART_VERSION >= 12080
#define ND_CUDART_FNS_12080(X) X(cudaStreamGetDevice)
#else
#define ND_CUDART_FNS_12080(X)
#endif

#define ND_NVRTC_FNS(X)                                                                                 \
    X(nvrtcCompileProgram) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcGetCUBIN)                \
    X(nvrtcGetCUBINSize) X(nvrtcGetErrorString) X(nvrtcGetProgramLog) X(nvrtcGetProgramLogSize)        \
    X(nvrtcVersion)

#define ND_CUBLAS_FNS(X)                                                                                \
    X(cublasCreate) X(cublasDestroy) X(cublasGemmEx) X(cublasGemmStridedBatchedEx)                      \
    X(cublasGetStatusString) X(cublasSetMathMode) X(cublasSetStream) X(cublasSetWorkspace)              \
    X(cublasSgetrfBatched) X(cublasDgetrfBatched) X(cublasSgetrsBatched) X(cublasDgetrsBatched)          \
    ND_CUBLAS_LA_FNS(X)

/* cuBLAS's complex batched LU, for the complex batched solves, and geam,
 * for the transpose after gesvd (lib_linalg.c). */
#define ND_CUBLAS_LA_FNS(X) \
    X(cublasCgetrfBatched) X(cublasZgetrfBatched) X(cublasCgetrsBatched) X(cublasZgetrsBatched)        \
    X(cublasSgeam) X(cublasDgeam) X(cublasCgeam) X(cublasZgeam)

/* cuSOLVER (dense): the linear algebra routines (lib_linalg.c). Loaded on
 * first use by nd_cuda_load_cusolver, not by nd_cuda_load: a program that
 * never calls nd_linalg_* never maps it. */
#define ND_CUSOLVER_DT(X, op) X(cusolverDnS##op) X(cusolverDnD##op)
#define ND_CUSOLVER_FNS(X)                                                                              \
    X(cusolverDnCreate) X(cusolverDnDestroy) X(cusolverDnSetStream) X(cusolverDnCreateGesvdjInfo)       \
    X(cusolverDnDestroyGesvdjInfo) ND_CUSOLVER_DT(X, potrf_bufferSize) ND_CUSOLVER_DT(X, potrf)         \
    ND_CUSOLVER_DT(X, getrf_bufferSize) ND_CUSOLVER_DT(X, getrf) ND_CUSOLVER_DT(X, getrs)               \
    ND_CUSOLVER_DT(X, geqrf_bufferSize) ND_CUSOLVER_DT(X, geqrf) ND_CUSOLVER_DT(X, orgqr_bufferSize)    \
    ND_CUSOLVER_DT(X, orgqr) ND_CUSOLVER_DT(X, syevd_bufferSize) ND_CUSOLVER_DT(X, syevd)               \
    ND_CUSOLVER_DT(X, gesvdj_bufferSize) ND_CUSOLVER_DT(X, gesvdj) ND_CUSOLVER_DT(X, potrfBatched)      \
    ND_CUSOLVER_DT(X, gesvd_bufferSize) ND_CUSOLVER_DT(X, gesvd)                                        \
    ND_CUSOLVER_DT(X, syevjBatched_bufferSize) ND_CUSOLVER_DT(X, syevjBatched) X(cusolverDnCreateSyevjInfo) \
    ND_CUSOLVER_DT(X, gesvdjBatched_bufferSize) ND_CUSOLVER_DT(X, gesvdjBatched)                        \
    X(cusolverDnDestroySyevjInfo) ND_CUSOLVER_COMPLEX_FNS(X) X(cusolverDnCreateParams)                   \
    X(cusolverDnDestroyParams) X(cusolverDnXgesvdp_bufferSize) X(cusolverDnXgesvdp)
/* The complex routines: the same operations (Hermitian ones for the
 * symmetric: ungqr, heevd, heevjBatched). */
#define ND_CUSOLVER_CZ(X, op) X(cusolverDnC##op) X(cusolverDnZ##op)
#define ND_CUSOLVER_COMPLEX_FNS(X)                                                                      \
    ND_CUSOLVER_CZ(X, potrf_bufferSize) ND_CUSOLVER_CZ(X, potrf) ND_CUSOLVER_CZ(X, getrf_bufferSize)    \
    ND_CUSOLVER_CZ(X, getrf) ND_CUSOLVER_CZ(X, getrs) ND_CUSOLVER_CZ(X, geqrf_bufferSize)               \
    ND_CUSOLVER_CZ(X, geqrf) ND_CUSOLVER_CZ(X, ungqr_bufferSize) ND_CUSOLVER_CZ(X, ungqr)               \
    ND_CUSOLVER_CZ(X, heevd_bufferSize) ND_CUSOLVER_CZ(X, heevd) ND_CUSOLVER_CZ(X, gesvdj_bufferSize)   \
    ND_CUSOLVER_CZ(X, gesvdj) ND_CUSOLVER_CZ(X, potrfBatched) ND_CUSOLVER_CZ(X, heevjBatched_bufferSize) \
    ND_CUSOLVER_CZ(X, heevjBatched) ND_CUSOLVER_CZ(X, gesvd_bufferSize) ND_CUSOLVER_CZ(X, gesvd)        \
    ND_CUSOLVER_CZ(X, gesvdjBatched_bufferSize) ND_CUSOLVER_CZ(X, gesvdjBatched)
/* Functions a cuSOLVER of the same major version may lack (geev came in
 * CUDA 12.6): looked up, but missing is not an error; the field is then
 * NULL and the caller says what it does instead. */
#if CUDART_VERSION >= 12060
#define ND_CUSOLVER_OPTIONAL_FNS(X) X(cusolverDnXgeev_bufferSize) X(cusolverDnXgeev)
#else
#define ND_CUSOLVER_OPTIONAL_FNS(X)
#endif

/* cuFFT: numpy.fft (lib_fft.c). Loaded on first use by nd_cuda_load_cufft,
 * like cuSOLVER. */
#define ND_CUFFT_FNS(X)                                                                                 \
    X(cufftCreate) X(cufftDestroy) X(cufftSetAutoAllocation) X(cufftMakePlanMany64) X(cufftSetWorkArea) \
    X(cufftSetStream) X(cufftExecC2C) X(cufftExecZ2Z) X(cufftExecR2C) X(cufftExecD2Z) X(cufftExecC2R)   \
    X(cufftExecZ2D)

/* A field per function, typed from the toolkit's own declaration. The
 * name is pasted (p_cudaMalloc) so that a function the headers rename
 * (cublasCreate is cublasCreate_v2) keeps its plain name here while its
 * type and the symbol looked up follow the rename. */
#define ND_CUDA_FN_FIELD(name) __typeof__(&name) p_##name;
typedef struct {
    ND_CUDART_FNS(ND_CUDA_FN_FIELD)
    ND_NVRTC_FNS(ND_CUDA_FN_FIELD)
    ND_CUBLAS_FNS(ND_CUDA_FN_FIELD)
    ND_CUSOLVER_FNS(ND_CUDA_FN_FIELD)
    ND_CUSOLVER_OPTIONAL_FNS(ND_CUDA_FN_FIELD)
    ND_CUFFT_FNS(ND_CUDA_FN_FIELD)
} nd_cuda_api_table;
#undef ND_CUDA_FN_FIELD

extern nd_cuda_api_table nd_cuda_api;

/* Loads the three libraries and every function, once per process (any
 * thread; later calls return the first call's outcome). ND_OK, or
 * ND_ERR_UNSUPPORTED with a message naming the library or function that
 * is missing and how to provide it. The table is usable only after ND_OK.
 *
 * Where it looks: with ND_CUDA_LIB_DIR set, only in that folder; otherwise
 * by soname through the dynamic loader (LD_LIBRARY_PATH, the ld.so cache)
 * and then in the toolkit folder nd was built against. */
nd_status nd_cuda_load(void);
/* nd's CUB plugin (prims/prims.h), once per process: from libnd's own
 * folder, then by name through the dynamic loader (a program linked with
 * the static libnd), then from the build tree it was built in. ND_OK, or
 * ND_ERR_UNSUPPORTED saying why (not built: nvcc was missing; not found;
 * a plugin of another version). Its functions are nd_cuda_prims.p_NAME. */
#include "backends/cuda/prims/prims.h"
#define ND_PRIMS_FIELD(name) __typeof__(&name) p_##name;
typedef struct {
    ND_PRIMS_FNS(ND_PRIMS_FIELD)
} nd_cuda_prims_table;
#undef ND_PRIMS_FIELD
extern nd_cuda_prims_table nd_cuda_prims;
nd_status nd_cuda_load_prims(void);

/* cuSOLVER (its rows of the table), once per process, after nd_cuda_load:
 * ND_OK, or ND_ERR_UNSUPPORTED naming what is missing. */
nd_status nd_cuda_load_cusolver(void);
/* cuFFT (its rows of the table), the same way. */
nd_status nd_cuda_load_cufft(void);

/* NVRTC alone (and only its rows of the table): for the code generator's
 * checks, which compile kernels but never run them. */
nd_status nd_cuda_load_nvrtc(void);


#define ND_CUDA_FN(name) (nd_cuda_api.p_##name)

/* Redirects: every listed function, called by its usual name. */
#ifndef ND_CUDA_LOADER_NO_REDIRECT
#undef cudaDeviceGetAttribute
#define cudaDeviceGetAttribute ND_CUDA_FN(cudaDeviceGetAttribute)
#undef cudaEventCreate
#define cudaEventCreate ND_CUDA_FN(cudaEventCreate)
#undef cudaEventCreateWithFlags
#define cudaEventCreateWithFlags ND_CUDA_FN(cudaEventCreateWithFlags)
#undef cudaEventDestroy
#define cudaEventDestroy ND_CUDA_FN(cudaEventDestroy)
#undef cudaEventElapsedTime
#define cudaEventElapsedTime ND_CUDA_FN(cudaEventElapsedTime)
#undef cudaEventRecord
#define cudaEventRecord ND_CUDA_FN(cudaEventRecord)
#undef cudaEventSynchronize
#define cudaEventSynchronize ND_CUDA_FN(cudaEventSynchronize)
#undef cudaFree
#define cudaFree ND_CUDA_FN(cudaFree)
#undef cudaFreeAsync
#define cudaFreeAsync ND_CUDA_FN(cudaFreeAsync)
#undef cudaFreeHost
#define cudaFreeHost ND_CUDA_FN(cudaFreeHost)
#undef cudaFuncGetAttributes
#define cudaFuncGetAttributes ND_CUDA_FN(cudaFuncGetAttributes)
#undef cudaGetDeviceCount
#define cudaGetDeviceCount ND_CUDA_FN(cudaGetDeviceCount)
#undef cudaGetDeviceProperties
#define cudaGetDeviceProperties ND_CUDA_FN(cudaGetDeviceProperties)
#undef cudaGetErrorName
#define cudaGetErrorName ND_CUDA_FN(cudaGetErrorName)
#undef cudaGetErrorString
#define cudaGetErrorString ND_CUDA_FN(cudaGetErrorString)
#undef cudaGetLastError
#define cudaGetLastError ND_CUDA_FN(cudaGetLastError)
#undef cudaGraphDestroy
#define cudaGraphDestroy ND_CUDA_FN(cudaGraphDestroy)
#undef cudaGraphExecDestroy
#define cudaGraphExecDestroy ND_CUDA_FN(cudaGraphExecDestroy)
#undef cudaGraphExecUpdate
#define cudaGraphExecUpdate ND_CUDA_FN(cudaGraphExecUpdate)
#undef cudaGraphInstantiate
#define cudaGraphInstantiate ND_CUDA_FN(cudaGraphInstantiate)
#undef cudaGraphLaunch
#define cudaGraphLaunch ND_CUDA_FN(cudaGraphLaunch)
#undef cudaLaunchKernel
#define cudaLaunchKernel ND_CUDA_FN(cudaLaunchKernel)
#undef cudaLaunchKernelExC
#define cudaLaunchKernelExC ND_CUDA_FN(cudaLaunchKernelExC)
#undef cudaLibraryGetKernel
#define cudaLibraryGetKernel ND_CUDA_FN(cudaLibraryGetKernel)
#undef cudaLibraryLoadData
#define cudaLibraryLoadData ND_CUDA_FN(cudaLibraryLoadData)
#undef cudaLibraryUnload
#define cudaLibraryUnload ND_CUDA_FN(cudaLibraryUnload)
#undef cudaMalloc
#define cudaMalloc ND_CUDA_FN(cudaMalloc)
#undef cudaMallocFromPoolAsync
#define cudaMallocFromPoolAsync ND_CUDA_FN(cudaMallocFromPoolAsync)
#undef cudaMallocHost
#define cudaMallocHost ND_CUDA_FN(cudaMallocHost)
#undef cudaMemGetInfo
#define cudaMemGetInfo ND_CUDA_FN(cudaMemGetInfo)
#undef cudaMemPoolCreate
#define cudaMemPoolCreate ND_CUDA_FN(cudaMemPoolCreate)
#undef cudaMemPoolDestroy
#define cudaMemPoolDestroy ND_CUDA_FN(cudaMemPoolDestroy)
#undef cudaMemPoolSetAttribute
#define cudaMemPoolSetAttribute ND_CUDA_FN(cudaMemPoolSetAttribute)
#undef cudaMemPoolTrimTo
#define cudaMemPoolTrimTo ND_CUDA_FN(cudaMemPoolTrimTo)
#undef cudaMemcpyAsync
#define cudaMemcpyAsync ND_CUDA_FN(cudaMemcpyAsync)
#undef cudaMemcpyPeerAsync
#define cudaMemcpyPeerAsync ND_CUDA_FN(cudaMemcpyPeerAsync)
#undef cudaDeviceCanAccessPeer
#define cudaDeviceCanAccessPeer ND_CUDA_FN(cudaDeviceCanAccessPeer)
#undef cudaDeviceEnablePeerAccess
#define cudaDeviceEnablePeerAccess ND_CUDA_FN(cudaDeviceEnablePeerAccess)
#undef cudaMemPoolSetAccess
#define cudaMemPoolSetAccess ND_CUDA_FN(cudaMemPoolSetAccess)
#undef cudaStreamQuery
#define cudaStreamQuery ND_CUDA_FN(cudaStreamQuery)
#undef cudaMemsetAsync
#define cudaMemsetAsync ND_CUDA_FN(cudaMemsetAsync)
#undef cudaPointerGetAttributes
#define cudaPointerGetAttributes ND_CUDA_FN(cudaPointerGetAttributes)
#undef cudaSetDevice
#define cudaSetDevice ND_CUDA_FN(cudaSetDevice)
#undef cudaStreamBeginCapture
#define cudaStreamBeginCapture ND_CUDA_FN(cudaStreamBeginCapture)
#undef cudaStreamCreateWithFlags
#define cudaStreamCreateWithFlags ND_CUDA_FN(cudaStreamCreateWithFlags)
#undef cudaStreamCreateWithPriority
#define cudaStreamCreateWithPriority ND_CUDA_FN(cudaStreamCreateWithPriority)
#undef cudaDeviceGetStreamPriorityRange
#define cudaDeviceGetStreamPriorityRange ND_CUDA_FN(cudaDeviceGetStreamPriorityRange)
#undef cudaStreamDestroy
#define cudaStreamDestroy ND_CUDA_FN(cudaStreamDestroy)
#undef cudaStreamEndCapture
#define cudaStreamEndCapture ND_CUDA_FN(cudaStreamEndCapture)
#undef cudaStreamSynchronize
#define cudaStreamSynchronize ND_CUDA_FN(cudaStreamSynchronize)
#undef cudaStreamWaitEvent
#define cudaStreamWaitEvent ND_CUDA_FN(cudaStreamWaitEvent)
#undef cudaDriverGetVersion
#define cudaDriverGetVersion ND_CUDA_FN(cudaDriverGetVersion)
#undef cudaRuntimeGetVersion
#define cudaRuntimeGetVersion ND_CUDA_FN(cudaRuntimeGetVersion)
#undef cudaGetDevice
#define cudaGetDevice ND_CUDA_FN(cudaGetDevice)
#undef cudaMemPoolGetAttribute
#define cudaMemPoolGetAttribute ND_CUDA_FN(cudaMemPoolGetAttribute)
#undef cudaStreamIsCapturing
#define cudaStreamIsCapturing ND_CUDA_FN(cudaStreamIsCapturing)
#if CUDART_VERSION >= 12080
#undef cudaStreamGetDevice
#define cudaStreamGetDevice ND_CUDA_FN(cudaStreamGetDevice)
#undef cudaIpcGetMemHandle
#define cudaIpcGetMemHandle ND_CUDA_FN(cudaIpcGetMemHandle)
#undef cudaIpcOpenMemHandle
#define cudaIpcOpenMemHandle ND_CUDA_FN(cudaIpcOpenMemHandle)
#undef cudaIpcCloseMemHandle
#define cudaIpcCloseMemHandle ND_CUDA_FN(cudaIpcCloseMemHandle)
#if CUDART_VERSION >= 12050
#undef cudaGetDriverEntryPointByVersion
#define cudaGetDriverEntryPointByVersion ND_CUDA_FN(cudaGetDriverEntryPointByVersion)
#endif
#endif
#undef nvrtcCompileProgram
#define nvrtcCompileProgram ND_CUDA_FN(nvrtcCompileProgram)
#undef nvrtcCreateProgram
#define nvrtcCreateProgram ND_CUDA_FN(nvrtcCreateProgram)
#undef nvrtcDestroyProgram
#define nvrtcDestroyProgram ND_CUDA_FN(nvrtcDestroyProgram)
#undef nvrtcGetCUBIN
#define nvrtcGetCUBIN ND_CUDA_FN(nvrtcGetCUBIN)
#undef nvrtcGetCUBINSize
#define nvrtcGetCUBINSize ND_CUDA_FN(nvrtcGetCUBINSize)
#undef nvrtcGetErrorString
#define nvrtcGetErrorString ND_CUDA_FN(nvrtcGetErrorString)
#undef nvrtcGetProgramLog
#define nvrtcGetProgramLog ND_CUDA_FN(nvrtcGetProgramLog)
#undef nvrtcGetProgramLogSize
#define nvrtcGetProgramLogSize ND_CUDA_FN(nvrtcGetProgramLogSize)
#undef nvrtcVersion
#define nvrtcVersion ND_CUDA_FN(nvrtcVersion)
#undef cublasCreate
#define cublasCreate ND_CUDA_FN(cublasCreate)
#undef cublasDestroy
#define cublasDestroy ND_CUDA_FN(cublasDestroy)
#undef cublasGemmEx
#define cublasGemmEx ND_CUDA_FN(cublasGemmEx)
#undef cublasGemmStridedBatchedEx
#define cublasGemmStridedBatchedEx ND_CUDA_FN(cublasGemmStridedBatchedEx)
#undef cublasGetStatusString
#define cublasGetStatusString ND_CUDA_FN(cublasGetStatusString)
#undef cublasSetMathMode
#define cublasSetMathMode ND_CUDA_FN(cublasSetMathMode)
#undef cublasSetStream
#define cublasSetStream ND_CUDA_FN(cublasSetStream)
#undef cublasSetWorkspace
#define cublasSetWorkspace ND_CUDA_FN(cublasSetWorkspace)
#undef cublasSgetrfBatched
#define cublasSgetrfBatched ND_CUDA_FN(cublasSgetrfBatched)
#undef cublasDgetrfBatched
#define cublasDgetrfBatched ND_CUDA_FN(cublasDgetrfBatched)
#undef cublasSgetrsBatched
#define cublasSgetrsBatched ND_CUDA_FN(cublasSgetrsBatched)
#undef cublasDgetrsBatched
#define cublasDgetrsBatched ND_CUDA_FN(cublasDgetrsBatched)
#undef cusolverDnSpotrfBatched
#define cusolverDnSpotrfBatched ND_CUDA_FN(cusolverDnSpotrfBatched)
#undef cusolverDnDpotrfBatched
#define cusolverDnDpotrfBatched ND_CUDA_FN(cusolverDnDpotrfBatched)
#undef cusolverDnSsyevjBatched_bufferSize
#define cusolverDnSsyevjBatched_bufferSize ND_CUDA_FN(cusolverDnSsyevjBatched_bufferSize)
#undef cusolverDnDsyevjBatched_bufferSize
#define cusolverDnDsyevjBatched_bufferSize ND_CUDA_FN(cusolverDnDsyevjBatched_bufferSize)
#undef cusolverDnSsyevjBatched
#define cusolverDnSsyevjBatched ND_CUDA_FN(cusolverDnSsyevjBatched)
#undef cusolverDnDsyevjBatched
#define cusolverDnDsyevjBatched ND_CUDA_FN(cusolverDnDsyevjBatched)
#undef cusolverDnCreateSyevjInfo
#define cusolverDnCreateSyevjInfo ND_CUDA_FN(cusolverDnCreateSyevjInfo)
#undef cusolverDnDestroySyevjInfo
#define cusolverDnDestroySyevjInfo ND_CUDA_FN(cusolverDnDestroySyevjInfo)
/* complex dense linear algebra, parameters, geev (lib_linalg.c) */
#undef cusolverDnCpotrf_bufferSize
#define cusolverDnCpotrf_bufferSize ND_CUDA_FN(cusolverDnCpotrf_bufferSize)
#undef cusolverDnZpotrf_bufferSize
#define cusolverDnZpotrf_bufferSize ND_CUDA_FN(cusolverDnZpotrf_bufferSize)
#undef cusolverDnCpotrf
#define cusolverDnCpotrf ND_CUDA_FN(cusolverDnCpotrf)
#undef cusolverDnZpotrf
#define cusolverDnZpotrf ND_CUDA_FN(cusolverDnZpotrf)
#undef cusolverDnCgetrf_bufferSize
#define cusolverDnCgetrf_bufferSize ND_CUDA_FN(cusolverDnCgetrf_bufferSize)
#undef cusolverDnZgetrf_bufferSize
#define cusolverDnZgetrf_bufferSize ND_CUDA_FN(cusolverDnZgetrf_bufferSize)
#undef cusolverDnCgetrf
#define cusolverDnCgetrf ND_CUDA_FN(cusolverDnCgetrf)
#undef cusolverDnZgetrf
#define cusolverDnZgetrf ND_CUDA_FN(cusolverDnZgetrf)
#undef cusolverDnCgetrs
#define cusolverDnCgetrs ND_CUDA_FN(cusolverDnCgetrs)
#undef cusolverDnZgetrs
#define cusolverDnZgetrs ND_CUDA_FN(cusolverDnZgetrs)
#undef cusolverDnCgeqrf_bufferSize
#define cusolverDnCgeqrf_bufferSize ND_CUDA_FN(cusolverDnCgeqrf_bufferSize)
#undef cusolverDnZgeqrf_bufferSize
#define cusolverDnZgeqrf_bufferSize ND_CUDA_FN(cusolverDnZgeqrf_bufferSize)
#undef cusolverDnCgeqrf
#define cusolverDnCgeqrf ND_CUDA_FN(cusolverDnCgeqrf)
#undef cusolverDnZgeqrf
#define cusolverDnZgeqrf ND_CUDA_FN(cusolverDnZgeqrf)
#undef cusolverDnCungqr_bufferSize
#define cusolverDnCungqr_bufferSize ND_CUDA_FN(cusolverDnCungqr_bufferSize)
#undef cusolverDnZungqr_bufferSize
#define cusolverDnZungqr_bufferSize ND_CUDA_FN(cusolverDnZungqr_bufferSize)
#undef cusolverDnCungqr
#define cusolverDnCungqr ND_CUDA_FN(cusolverDnCungqr)
#undef cusolverDnZungqr
#define cusolverDnZungqr ND_CUDA_FN(cusolverDnZungqr)
#undef cusolverDnCheevd_bufferSize
#define cusolverDnCheevd_bufferSize ND_CUDA_FN(cusolverDnCheevd_bufferSize)
#undef cusolverDnZheevd_bufferSize
#define cusolverDnZheevd_bufferSize ND_CUDA_FN(cusolverDnZheevd_bufferSize)
#undef cusolverDnCheevd
#define cusolverDnCheevd ND_CUDA_FN(cusolverDnCheevd)
#undef cusolverDnZheevd
#define cusolverDnZheevd ND_CUDA_FN(cusolverDnZheevd)
#undef cusolverDnCgesvdj_bufferSize
#define cusolverDnCgesvdj_bufferSize ND_CUDA_FN(cusolverDnCgesvdj_bufferSize)
#undef cusolverDnZgesvdj_bufferSize
#define cusolverDnZgesvdj_bufferSize ND_CUDA_FN(cusolverDnZgesvdj_bufferSize)
#undef cusolverDnCgesvdj
#define cusolverDnCgesvdj ND_CUDA_FN(cusolverDnCgesvdj)
#undef cusolverDnZgesvdj
#define cusolverDnZgesvdj ND_CUDA_FN(cusolverDnZgesvdj)
#undef cusolverDnCpotrfBatched
#define cusolverDnCpotrfBatched ND_CUDA_FN(cusolverDnCpotrfBatched)
#undef cusolverDnZpotrfBatched
#define cusolverDnZpotrfBatched ND_CUDA_FN(cusolverDnZpotrfBatched)
#undef cusolverDnCheevjBatched_bufferSize
#define cusolverDnCheevjBatched_bufferSize ND_CUDA_FN(cusolverDnCheevjBatched_bufferSize)
#undef cusolverDnZheevjBatched_bufferSize
#define cusolverDnZheevjBatched_bufferSize ND_CUDA_FN(cusolverDnZheevjBatched_bufferSize)
#undef cusolverDnCheevjBatched
#define cusolverDnCheevjBatched ND_CUDA_FN(cusolverDnCheevjBatched)
#undef cusolverDnZheevjBatched
#define cusolverDnZheevjBatched ND_CUDA_FN(cusolverDnZheevjBatched)
#undef cusolverDnCreateParams
#define cusolverDnCreateParams ND_CUDA_FN(cusolverDnCreateParams)
#undef cusolverDnDestroyParams
#define cusolverDnDestroyParams ND_CUDA_FN(cusolverDnDestroyParams)
#undef cusolverDnXgesvdp_bufferSize
#define cusolverDnXgesvdp_bufferSize ND_CUDA_FN(cusolverDnXgesvdp_bufferSize)
#undef cusolverDnXgesvdp
#define cusolverDnXgesvdp ND_CUDA_FN(cusolverDnXgesvdp)
#undef cublasCgetrfBatched
#define cublasCgetrfBatched ND_CUDA_FN(cublasCgetrfBatched)
#undef cublasZgetrfBatched
#define cublasZgetrfBatched ND_CUDA_FN(cublasZgetrfBatched)
#undef cublasCgetrsBatched
#define cublasCgetrsBatched ND_CUDA_FN(cublasCgetrsBatched)
#undef cublasZgetrsBatched
#define cublasZgetrsBatched ND_CUDA_FN(cublasZgetrsBatched)
#if CUDART_VERSION >= 12060
#undef cusolverDnXgeev_bufferSize
#define cusolverDnXgeev_bufferSize ND_CUDA_FN(cusolverDnXgeev_bufferSize)
#undef cusolverDnXgeev
#define cusolverDnXgeev ND_CUDA_FN(cusolverDnXgeev)
#endif
#undef cusolverDnCreate
#define cusolverDnCreate ND_CUDA_FN(cusolverDnCreate)
#undef cusolverDnDestroy
#define cusolverDnDestroy ND_CUDA_FN(cusolverDnDestroy)
#undef cusolverDnSetStream
#define cusolverDnSetStream ND_CUDA_FN(cusolverDnSetStream)
#undef cusolverDnCreateGesvdjInfo
#define cusolverDnCreateGesvdjInfo ND_CUDA_FN(cusolverDnCreateGesvdjInfo)
#undef cusolverDnDestroyGesvdjInfo
#define cusolverDnDestroyGesvdjInfo ND_CUDA_FN(cusolverDnDestroyGesvdjInfo)
#undef cusolverDnSpotrf_bufferSize
#define cusolverDnSpotrf_bufferSize ND_CUDA_FN(cusolverDnSpotrf_bufferSize)
#undef cusolverDnDpotrf_bufferSize
#define cusolverDnDpotrf_bufferSize ND_CUDA_FN(cusolverDnDpotrf_bufferSize)
#undef cusolverDnSpotrf
#define cusolverDnSpotrf ND_CUDA_FN(cusolverDnSpotrf)
#undef cusolverDnDpotrf
#define cusolverDnDpotrf ND_CUDA_FN(cusolverDnDpotrf)
#undef cusolverDnSgetrf_bufferSize
#define cusolverDnSgetrf_bufferSize ND_CUDA_FN(cusolverDnSgetrf_bufferSize)
#undef cusolverDnDgetrf_bufferSize
#define cusolverDnDgetrf_bufferSize ND_CUDA_FN(cusolverDnDgetrf_bufferSize)
#undef cusolverDnSgetrf
#define cusolverDnSgetrf ND_CUDA_FN(cusolverDnSgetrf)
#undef cusolverDnDgetrf
#define cusolverDnDgetrf ND_CUDA_FN(cusolverDnDgetrf)
#undef cusolverDnSgetrs
#define cusolverDnSgetrs ND_CUDA_FN(cusolverDnSgetrs)
#undef cusolverDnDgetrs
#define cusolverDnDgetrs ND_CUDA_FN(cusolverDnDgetrs)
#undef cusolverDnSgeqrf_bufferSize
#define cusolverDnSgeqrf_bufferSize ND_CUDA_FN(cusolverDnSgeqrf_bufferSize)
#undef cusolverDnDgeqrf_bufferSize
#define cusolverDnDgeqrf_bufferSize ND_CUDA_FN(cusolverDnDgeqrf_bufferSize)
#undef cusolverDnSgeqrf
#define cusolverDnSgeqrf ND_CUDA_FN(cusolverDnSgeqrf)
#undef cusolverDnDgeqrf
#define cusolverDnDgeqrf ND_CUDA_FN(cusolverDnDgeqrf)
#undef cusolverDnSorgqr_bufferSize
#define cusolverDnSorgqr_bufferSize ND_CUDA_FN(cusolverDnSorgqr_bufferSize)
#undef cusolverDnDorgqr_bufferSize
#define cusolverDnDorgqr_bufferSize ND_CUDA_FN(cusolverDnDorgqr_bufferSize)
#undef cusolverDnSorgqr
#define cusolverDnSorgqr ND_CUDA_FN(cusolverDnSorgqr)
#undef cusolverDnDorgqr
#define cusolverDnDorgqr ND_CUDA_FN(cusolverDnDorgqr)
#undef cusolverDnSsyevd_bufferSize
#define cusolverDnSsyevd_bufferSize ND_CUDA_FN(cusolverDnSsyevd_bufferSize)
#undef cusolverDnDsyevd_bufferSize
#define cusolverDnDsyevd_bufferSize ND_CUDA_FN(cusolverDnDsyevd_bufferSize)
#undef cusolverDnSsyevd
#define cusolverDnSsyevd ND_CUDA_FN(cusolverDnSsyevd)
#undef cusolverDnDsyevd
#define cusolverDnDsyevd ND_CUDA_FN(cusolverDnDsyevd)
#undef cusolverDnSgesvdj_bufferSize
#define cusolverDnSgesvdj_bufferSize ND_CUDA_FN(cusolverDnSgesvdj_bufferSize)
#undef cusolverDnDgesvdj_bufferSize
#define cusolverDnDgesvdj_bufferSize ND_CUDA_FN(cusolverDnDgesvdj_bufferSize)
#undef cublasSgeam
#define cublasSgeam ND_CUDA_FN(cublasSgeam)
#undef cublasDgeam
#define cublasDgeam ND_CUDA_FN(cublasDgeam)
#undef cublasCgeam
#define cublasCgeam ND_CUDA_FN(cublasCgeam)
#undef cublasZgeam
#define cublasZgeam ND_CUDA_FN(cublasZgeam)
#undef cusolverDnSgesvd_bufferSize
#define cusolverDnSgesvd_bufferSize ND_CUDA_FN(cusolverDnSgesvd_bufferSize)
#undef cusolverDnSgesvd
#define cusolverDnSgesvd ND_CUDA_FN(cusolverDnSgesvd)
#undef cusolverDnDgesvd_bufferSize
#define cusolverDnDgesvd_bufferSize ND_CUDA_FN(cusolverDnDgesvd_bufferSize)
#undef cusolverDnDgesvd
#define cusolverDnDgesvd ND_CUDA_FN(cusolverDnDgesvd)
#undef cusolverDnCgesvd_bufferSize
#define cusolverDnCgesvd_bufferSize ND_CUDA_FN(cusolverDnCgesvd_bufferSize)
#undef cusolverDnCgesvd
#define cusolverDnCgesvd ND_CUDA_FN(cusolverDnCgesvd)
#undef cusolverDnZgesvd_bufferSize
#define cusolverDnZgesvd_bufferSize ND_CUDA_FN(cusolverDnZgesvd_bufferSize)
#undef cusolverDnZgesvd
#define cusolverDnZgesvd ND_CUDA_FN(cusolverDnZgesvd)
#undef cusolverDnSgesvdj
#define cusolverDnSgesvdj ND_CUDA_FN(cusolverDnSgesvdj)
#undef cusolverDnDgesvdj
#define cusolverDnDgesvdj ND_CUDA_FN(cusolverDnDgesvdj)
#undef cufftCreate
#define cufftCreate ND_CUDA_FN(cufftCreate)
#undef cufftDestroy
#define cufftDestroy ND_CUDA_FN(cufftDestroy)
#undef cufftSetAutoAllocation
#define cufftSetAutoAllocation ND_CUDA_FN(cufftSetAutoAllocation)
#undef cufftMakePlanMany64
#define cufftMakePlanMany64 ND_CUDA_FN(cufftMakePlanMany64)
#undef cufftSetWorkArea
#define cufftSetWorkArea ND_CUDA_FN(cufftSetWorkArea)
#undef cufftSetStream
#define cufftSetStream ND_CUDA_FN(cufftSetStream)
#undef cufftExecC2C
#define cufftExecC2C ND_CUDA_FN(cufftExecC2C)
#undef cufftExecZ2Z
#define cufftExecZ2Z ND_CUDA_FN(cufftExecZ2Z)
#undef cufftExecR2C
#define cufftExecR2C ND_CUDA_FN(cufftExecR2C)
#undef cufftExecD2Z
#define cufftExecD2Z ND_CUDA_FN(cufftExecD2Z)
#undef cufftExecC2R
#define cufftExecC2R ND_CUDA_FN(cufftExecC2R)
#undef cufftExecZ2D
#define cufftExecZ2D ND_CUDA_FN(cufftExecZ2D)
#undef cudaMemset2DAsync
#define cudaMemset2DAsync ND_CUDA_FN(cudaMemset2DAsync)
#undef cudaMemcpy2DAsync
#define cudaMemcpy2DAsync ND_CUDA_FN(cudaMemcpy2DAsync)
#undef cusolverDnSgesvdjBatched_bufferSize
#define cusolverDnSgesvdjBatched_bufferSize ND_CUDA_FN(cusolverDnSgesvdjBatched_bufferSize)
#undef cusolverDnDgesvdjBatched_bufferSize
#define cusolverDnDgesvdjBatched_bufferSize ND_CUDA_FN(cusolverDnDgesvdjBatched_bufferSize)
#undef cusolverDnCgesvdjBatched_bufferSize
#define cusolverDnCgesvdjBatched_bufferSize ND_CUDA_FN(cusolverDnCgesvdjBatched_bufferSize)
#undef cusolverDnZgesvdjBatched_bufferSize
#define cusolverDnZgesvdjBatched_bufferSize ND_CUDA_FN(cusolverDnZgesvdjBatched_bufferSize)
#undef cusolverDnSgesvdjBatched
#define cusolverDnSgesvdjBatched ND_CUDA_FN(cusolverDnSgesvdjBatched)
#undef cusolverDnDgesvdjBatched
#define cusolverDnDgesvdjBatched ND_CUDA_FN(cusolverDnDgesvdjBatched)
#undef cusolverDnCgesvdjBatched
#define cusolverDnCgesvdjBatched ND_CUDA_FN(cusolverDnCgesvdjBatched)
#undef cusolverDnZgesvdjBatched
#define cusolverDnZgesvdjBatched ND_CUDA_FN(cusolverDnZgesvdjBatched)
#endif

#endif
