"""V(2,1) factors of the 2D model (mg2d.py) for variants x masks x sizes.

    python3 run.py SIZES VARIANTS MASKS [--twogrid]
    python3 run.py 64,127 base,V5 sealed,film1,topD      (names: see below; 'all' for every one)

--twogrid: for each level l the factor with level l solved exactly (the
first level pair whose factor is bad is where the hierarchy goes wrong).
"""
import sys

from mg2d import MG, factor, mask_box, mask_disc, mask_film, mask_film_low, mask_film_top, mask_pocket_held, mask_pool, \
    mask_sealed, mask_sealed2, mask_stairs, mask_topd, mask_walls

VARIANTS = {
    'base': {},
    'conn': {'type_rule': 'conn'},
    'tr': {'restr': 'tr'},
    'conn+tr': {'type_rule': 'conn', 'restr': 'tr'},
    'anyzero': {'frac': 'anyzero_w'},
    'ddist': {'ddist': True},
    'V5': {'ddist': True, 'frac': 'az_sel', 'type_rule': 'split'},
    'V6': {'ddist': True, 'frac': 'az_sel', 'type_rule': 'split', 'restr': 'tr'},
    'V5iso': {'ddist': True, 'frac': 'az_sel', 'type_rule': 'split', 'iso': True},  # the library's rules
}


MASKS = {
    'box': mask_box,
    'disc': mask_disc,
    'sealed': mask_sealed,  # Dirichlet cells above a one-cell solid layer, fluid below
    'sealedJ+1': lambda n: mask_sealed(n, J=int(round(0.7 * n)) + 1),
    'sealed2': mask_sealed2,
    'film1': lambda n: mask_film(n, 1),  # a one-cell fluid film at the high x wall behind a solid layer
    'film2': lambda n: mask_film(n, 2),
    'filmlow1': lambda n: mask_film_low(n, 1),
    'filmtop1': lambda n: mask_film_top(n, 1),
    'topD': mask_topd,
    'pool': mask_pool,
    'walls': mask_walls,
    'stairs': mask_stairs,
    'pocketheld': mask_pocket_held,  # a sealed pocket whose one Dirichlet cell lies off the coarse nodes
}


def pick(arg, table):
    return list(table) if arg == 'all' else arg.split(',')


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    sizes = [int(s) for s in argv[1].split(',')]
    variants, masks = pick(argv[2], VARIANTS), pick(argv[3], MASKS)
    twogrid = '--twogrid' in argv[4:]
    for v in variants:
        for n in sizes:
            if twogrid:
                for m in masks:
                    mg = MG(MASKS[m](n), VARIANTS[v])
                    fs = [factor(None, VARIANTS[v], exact_at=l, mg=mg)[0] for l in range(1, len(mg.levels))]
                    print('%-8s %4d %-10s exact at level 1..: %s' % (v, n, m, ' '.join('%.3f' % f for f in fs)),
                          flush=True)
                continue
            row = ['%s %.3f' % (m, factor(MASKS[m](n), VARIANTS[v])[0]) for m in masks]
            print('%-8s %4d  %s' % (v, n, '  '.join(row)), flush=True)


if __name__ == '__main__':
    main(sys.argv)
