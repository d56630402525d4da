/**
 * @module eval/memlineage/paper
 * The values MemLineage §6 prints, cell by cell, for the comparison in the summary and beside
 * every cell the report reproduces.
 */
/** The paper's values (MemLineage §6), for the comparison in the summary and report. */
export const PAPER = {
  table1: { no_defense: [1, 1, 1], sig_only: [0, 1, 1], memlineage: [0, 0, 0] },
  table2: {
    no_defense: ['TRUSTED', 0, 'send_email', 1],
    sig_only: ['TRUSTED', 0, 'send_email', 1],
    memlineage: ['EXTERNAL', 1, 'send_email', 0],
    memory_sandbox: ['TRUSTED', 0, 'NONE', 0],
    coarse_taint: ['EXTERNAL', 1, 'send_email', 0],
  },
  table3: {
    'No defence': [6, 2, 0, 0],
    'Sig. only': [6, 2, 0, 0],
    Deny: [0, 2, 6, 0],
    'Strip+retry': [0, 4, 31, 0],
    'Authority repair': [0, 4, 4, 4],
  },
  table4: {
    'trusted bill only': 'allow',
    'injected recipient': 'repair',
    'injected amount + recip.': 'repair',
    'external evidence only': 'deny',
  },
  table5: {
    '0.00': [1, 1, 1, 1],
    '0.10': [1, 1, 1, 1],
    '0.30': [1, 1, 1, 1],
    '0.50': [1, 1, 1, 1],
    '0.90': [1, 1, 1, 1],
    '0.99': [1, 1, 1, 1],
    '1.00': [0, 0, 0, 0],
  } as Record<string, readonly number[]>,
  table8: {
    no_defense: [1, 1, 1, 1],
    sig_only: [1, 1, 1, 1],
    memlineage: [1, 1, 1, 1],
  } as Record<string, readonly number[]>,
  table10: {
    'trusted bill + note': ['deny', 'allow', 'yes'],
    'injected recipient': ['deny', 'repair', 'yes'],
    'injected amount + recip.': ['deny', 'repair', 'yes'],
    'external evidence only': ['deny', 'deny', 'no'],
  } as Record<string, readonly string[]>,
  table12: {
    'parent omission': [1, 0, 0],
    'edge dilution': [1, 1, 0],
    'semantic laundering': [1, 1, 0],
  } as Record<string, readonly number[]>,
  table6: {
    '0.00': [1, 1, 1, 1],
    '0.10': [1, 1, 1, 1],
    '0.30': [1, 1, 1, 0],
    '0.50': [1, 1, 0, 0],
    '0.90': [0, 0, 0, 0],
    '0.99': [0, 0, 0, 0],
    '1.00': [0, 0, 0, 0],
  } as Record<string, readonly number[]>,
  table9: {
    sig_only: ['1/3', '4/4', '-'],
    memlineage: ['3/3', '4/4', '9/13'],
    memory_sandbox: ['3/3', '0/4', '-'],
    coarse_taint: ['3/3', '4/4', '0/13'],
  },
  table11: [1, 1, 0, 0, 1],
  table13: {
    'parentless deny': [0, 1, 1, 1],
    'explicit-edge tau=0': [1, 1, 1, 1],
    'lower multi-hop tau': [1, 1, 1, 1],
  },
} as const;
