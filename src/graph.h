// graph.h -- replay of fixed launch sequences from CUDA graphs
#pragma once
#include "config.h"
#include "errors.h"

namespace pgpu {

// Multigrid launches replay CUDA graphs: a multigrid pass is a few hundred
// launches, many on small levels, and a graph removes most of the gaps
// between them (FMG at 512^3: 7.95 -> 7.62 ms in float).  A sequence of
// launches with no host synchronisation inside -- a PGPU_FIXED solve, an FMG
// pass, a cycle -- is captured the first time it runs for a (u, f) pair, on
// a stream of the handle's (thread-local capture mode), and instantiated
// (host time, once); later runs with that pair only launch the graph.  The
// graphs of the last REPLAY_MAX (pair, sequence) keys are kept.  Where the
// caller's stream is itself being captured, the launches go there directly.
// A sequence must leave the host-side state (Level::cur) as it found it, so
// that its replay is the same sequence -- FMG passes and fixed solves end in
// u -- or the caller keys and restores it: a cycle of run_multigrid may end
// in level 0's other array (Multigrid::flip0), keyed by the array it starts
// in, and its kept `iterations` say where it ends.

class Replay {
  public:
    ~Replay()
    {
        for (Graph &p : graphs) cudaGraphExecDestroy(p.exec);
        if (cap_st) cudaStreamDestroy(cap_st);
    }
    pgpu_status init(Env &env)
    {
        char *err = env.err;
        PGPU_CUDA(cudaStreamCreateWithFlags(&cap_st, cudaStreamNonBlocking));
        return PGPU_SUCCESS;
    }
    // Runs launches() -- which puts its work on env.st and may set
    // `iterations` -- as the graph of (u, f, kind), on env.st.
    template <class F>
    pgpu_status run(Env &env, const void *u, const void *f, int kind, int &iterations, F &&launches)
    {
        char *err = env.err;
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        PGPU_CUDA(cudaStreamIsCapturing(env.st, &cs));
        if (cs != cudaStreamCaptureStatusNone || !cap_st) return launches();
        for (Graph &p : graphs)
            if (p.u == u && p.f == f && p.kind == kind) {
                p.used = ++clock;
                iterations = p.iterations;
                PGPU_CUDA(cudaGraphLaunch(p.exec, env.st));
                return PGPU_SUCCESS;
            }
        cudaError_t ce = cudaStreamBeginCapture(cap_st, cudaStreamCaptureModeThreadLocal);
        if (ce != cudaSuccess) return cuda_status(err, ce, "cudaStreamBeginCapture", PGPU_AT);
        const cudaStream_t user = env.st;
        env.st = cap_st;
        const pgpu_status s = launches();
        env.st = user;
        cudaGraph_t graph = nullptr;
        ce = cudaStreamEndCapture(cap_st, &graph);
        if (s != PGPU_SUCCESS || ce != cudaSuccess) {
            if (graph) cudaGraphDestroy(graph);
            if (s != PGPU_SUCCESS) return s;
            return cuda_status(err, ce, "cudaStreamEndCapture", PGPU_AT);
        }
        cudaGraphExec_t exec = nullptr;
        // (node priorities: the distributed FFT's moves keep their stream's)
        ce = cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagUseNodePriority);
        cudaGraphDestroy(graph);
        if (ce != cudaSuccess) return cuda_status(err, ce, "cudaGraphInstantiateWithFlags", PGPU_AT);
        if ((int)graphs.size() == REPLAY_MAX) { // the least recently used makes room
            size_t old = 0;
            for (size_t k = 1; k < graphs.size(); ++k)
                if (graphs[k].used < graphs[old].used) old = k;
            cudaGraphExecDestroy(graphs[old].exec);
            graphs.erase(graphs.begin() + (std::ptrdiff_t)old);
        }
        graphs.push_back(Graph{u, f, kind, exec, iterations, ++clock});
        PGPU_CUDA(cudaGraphLaunch(exec, env.st));
        return PGPU_SUCCESS;
    }

    // Forgets every graph (the levels' grids they hold changed).
    void clear()
    {
        for (Graph &p : graphs) cudaGraphExecDestroy(p.exec);
        graphs.clear();
    }

  private:
    struct Graph {
        const void *u, *f;
        int kind;
        cudaGraphExec_t exec;
        int iterations;
        unsigned long long used;
    };
    cudaStream_t cap_st = nullptr;
    std::vector<Graph> graphs;
    unsigned long long clock = 0;
};

} // namespace pgpu
