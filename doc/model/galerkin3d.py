"""A 3D CPU model of poisson_gpu's Galerkin levels where beta jumps (src/odi.h).

A ball of beta JUMP (radius 1/4, centre of the unit cube) in beta 1, Dirichlet
box, vertex-centred nodes, faces by harmonic means; f = sin(3x) cos(2y) + z.
Coarse nodes on every other fine node (as odi_node_map), P in stages by the
axes a node lies between coarse nodes along, each stage collapsing the row
onto those axes (BoxMG); coarse operators P^T A P; Gauss-Seidel in 8 colours,
V(NU) cycles, the coarsest level (3^3) solved exactly.  Prints each level's
smallest P divisor over its diagonal and the residual per cycle from u = 0.

    python3 galerkin3d.py N JUMP [MODE [NU]]

MODE: galp (the library's: the collapsed couplings' positive parts), gal
(every collapsed coupling: divisors of either sign appear on coarse levels,
e.g. N = 111, JUMP = 1e4), odi7 (7-point weights on every level).  NU:
pre and post smoothing, default 21.  Needs numpy and scipy; N up to about
127 (a minute of setup).
"""
import numpy as np, scipy.sparse as sp, scipy.sparse.linalg as spla, sys, time

def fine_op(n, beta):
    h = 1.0/(n+1); N = n**3
    idx = np.arange(N).reshape(n,n,n)
    rows=[];cols=[];vals=[]; diag=np.zeros((n,n,n))
    # ghost beta: extend with edge values for the boundary faces
    bp = np.pad(beta, 1, mode='edge')
    for d in range(3):
        sl0=[slice(1,-1)]*3; sl1=[slice(1,-1)]*3
        # faces between node p and p+e_d, including to the wall at both ends
        b = beta
        for s in (-1, 1):
            sh=[slice(1,-1)]*3; sh[d]=slice(1+s, n+1+s)
            bn = bp[tuple(sh)]
            c = 2*b*bn/(b+bn)/h**2
            diag += c
            # interior neighbours
            src=[slice(None)]*3; dst=[slice(None)]*3
            if s==1: src[d]=slice(0,n-1); dst[d]=slice(1,n)
            else: src[d]=slice(1,n); dst[d]=slice(0,n-1)
            rows.append(idx[tuple(src)].ravel()); cols.append(idx[tuple(dst)].ravel()); vals.append(-c[tuple(src)].ravel())
    rows.append(idx.ravel()); cols.append(idx.ravel()); vals.append(diag.ravel())
    return sp.csr_matrix((np.concatenate(vals),(np.concatenate(rows),np.concatenate(cols))),shape=(N,N))

def offsets_of(A, n):
    """dense stencil array S[n,n,n,3,3,3] from sparse A on an n^3 grid"""
    A = A.tocoo(); S = np.zeros((n,n,n,3,3,3))
    i = np.array(np.unravel_index(A.row,(n,n,n))); j = np.array(np.unravel_index(A.col,(n,n,n)))
    o = j-i+1
    assert o.min()>=0 and o.max()<=2
    S[i[0],i[1],i[2],o[0],o[1],o[2]] = A.data
    return S

STATS=[]
def prolong(A, n, mode):
    STATS.clear()
    """P from fine n^3 (n odd) to coarse m^3, m=(n-1)/2; coarse I at fine 2I+1."""
    m=n//2; S = offsets_of(A, n)
    # value arrays expressed as linear combos of coarse nodes: build P row by row via stages
    Pf = {}  # fine flat index -> dict(coarse -> w)
    fidx = lambda a,b,c: (a*n+b)*n+c
    cidx = lambda a,b,c: (a*m+b)*m+c
    rows=[];cols=[];vals=[]
    P = [[[None]*n for _ in range(n)] for _ in range(n)]
    for a in range(n):
        for b in range(n):
            for c in range(n):
                if a%2 and b%2 and c%2: P[a][b][c]={cidx(a//2,b//2,c//2):1.0}
    for stage in (1,2,3):
        for a in range(n):
            for b in range(n):
                for c in range(n):
                    p=(a,b,c); between=[d for d in range(3) if p[d]%2==0]
                    if len(between)!=stage: continue
                    st = S[a,b,c]
                    if mode=='odi7':
                        # 7-point couplings only along the between-axes
                        acc={}; den=0.0
                        for d in between:
                            for s in (-1,1):
                                o=[1,1,1]; o[d]+=s; w=-st[tuple(o)]
                                den+=w
                                q=list(p); q[d]+=s
                                if 0<=q[d]<n:
                                    for k,v in P[q[0]][q[1]][q[2]].items(): acc[k]=acc.get(k,0)+w*v
                        # 7-pt: normalise by the sum of the between couplings (walls take 0)
                    else:
                        # collapse the stencil along the non-between axes, use neighbours in the between-subspace
                        acc={}; rs=st.sum(); grp={}
                        for o in np.ndindex(3,3,3):
                            if o==(1,1,1): continue
                            w=-st[o]
                            if w==0: continue
                            if all(o[d]==1 for d in between): continue
                            q=list(p)
                            for d in between: q[d]+=o[d]-1
                            grp[tuple(q)]=grp.get(tuple(q),0)+w
                        den = (max(rs,0) if mode=='galp' else rs)
                        for q,w in grp.items():
                            if mode=='galp' and w<=0: continue
                            den+=w
                            if all(0<=q[d]<n for d in range(3)):
                                for k,v in P[q[0]][q[1]][q[2]].items(): acc[k]=acc.get(k,0)+w*v
                    if mode!='odi7':
                        STATS.append(den/st[1,1,1])
                    P[a][b][c]={k:v/den for k,v in acc.items()}
    for a in range(n):
        for b in range(n):
            for c in range(n):
                for k,v in P[a][b][c].items(): rows.append(fidx(a,b,c)); cols.append(k); vals.append(v)
    return sp.csr_matrix((vals,(rows,cols)),shape=(n**3,m**3))

def colors(n):
    g=np.indices((n,n,n)).reshape(3,-1)
    return [np.where((g[0]%2==a)&(g[1]%2==b)&(g[2]%2==c))[0] for a in (0,1) for b in (0,1) for c in (0,1)]

class MG:
    def __init__(s, A, n, mode, nu=(2,1)):
        s.A=[A]; s.n=[n]; s.P=[]; s.nu=nu
        while n>3:
            P=prolong(s.A[-1], n, mode); Ac=(P.T@s.A[-1]@P).tocsr()
            print('level n',n,'min den/diag %.3e'%min(STATS), 'count<1e-3', sum(1 for v in STATS if v<1e-3), flush=True)
            Ac.eliminate_zeros()
            s.P.append(P); s.A.append(Ac); n=n//2; s.n.append(n)
        s.col=[colors(k) for k in s.n]; s.D=[A.diagonal() for A in s.A]
        s.lu=spla.splu(s.A[-1].tocsc())
    def smooth(s,l,u,f,k,rev=False):
        cols=s.col[l][::-1] if rev else s.col[l]
        A=s.A[l]; D=s.D[l]
        for _ in range(k):
            for c in cols:
                r=f[c]-A[c]@u; u[c]+=r/D[c]
        return u
    def cycle(s,l,u,f):
        if l==len(s.A)-1: return s.lu.solve(f)
        u=s.smooth(l,u,f,s.nu[0])
        r=f-s.A[l]@u
        e=s.cycle(l+1,np.zeros(s.A[l+1].shape[0]),s.P[l].T@r)
        u=u+s.P[l]@e
        return s.smooth(l,u,f,s.nu[1],rev=True)

if __name__=='__main__':
    n=int(sys.argv[1]); jump=float(sys.argv[2]); mode=sys.argv[3] if len(sys.argv)>3 else 'galp'
    h=1/(n+1); x=np.arange(1,n+1)*h
    X,Y,Z=np.meshgrid(x,x,x,indexing='ij')
    beta=np.where((X-.5)**2+(Y-.5)**2+(Z-.5)**2<.25**2, jump, 1.0)
    A=fine_op(n,beta); f=(np.sin(3*X)*np.cos(2*Y)+Z).ravel()
    t=time.time(); mg=MG(A,n,mode,nu=tuple(int(v) for v in (sys.argv[4] if len(sys.argv)>4 else "21"))); print('setup',time.time()-t,'levels',mg.n,'nnz',[a.nnz//a.shape[0] for a in mg.A])
    u=np.zeros(n**3); r0=np.linalg.norm(f); prev=r0
    for it in range(40):
        u=mg.cycle(0,u,f); r=np.linalg.norm(f-A@u)
        print(it+1, '%.3e %.3f'%(r/r0, r/prev)); prev=r
        if r/r0<1e-10: break
