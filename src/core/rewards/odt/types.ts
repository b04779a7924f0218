// The Oracle-guided Diagnostic Tree (Progress-SQL App. D): the shapes shared by building, scoring, tagging and
// verbalising. Everything here is plain data, so a tree can be cached (gold trees are) and printed as JSON.

/** The five node types of App. D. Only SELECT nodes carry a local profile. */
type OdtNodeType = 'ROOT' | 'SELECT' | 'CTE' | 'SET_OP' | 'SUBQUERY';

/**
 * The local structural profile p = (c, b, T, S, W, J, G, H, O) of one SELECT (App. D). Set-valued features are
 * sorted, de-duplicated arrays of normalised signatures (literals are `?`, aliases resolved to table names).
 */
export interface LocalProfile {
  /** c: structural counts. */
  counts: { joins: number; selectItems: number };
  /** b: Boolean indicators. */
  flags: {
    where: boolean;
    groupBy: boolean;
    having: boolean;
    orderBy: boolean;
    limit: boolean;
    aggregation: boolean;
    distinct: boolean;
  };
  /** T: normalised table names (base tables and CTE names in FROM/JOIN). */
  tables: string[];
  /** S: SELECT projection signatures (item aliases ignored). */
  select: string[];
  /** W: WHERE predicates, split at AND. */
  where: string[];
  /** J: JOIN-condition signatures (ON split at AND, USING columns). */
  join: string[];
  /** G: GROUP BY column signatures. */
  groupBy: string[];
  /** H: HAVING predicates, split at AND. */
  having: string[];
  /** O: ORDER BY signatures (`expr ASC|DESC`) plus the LIMIT structure (`LIMIT ?`, `LIMIT ? OFFSET ?`). */
  orderBy: string[];
}

export interface OdtNode {
  type: OdtNodeType;
  /** CTE: its name (lower-cased); SET_OP: the operator (`union`, `union all`, `intersect`, `except`); SUBQUERY: the
   *  clause it appears in (`from`, `where`, `having`, `select`, `on`, `group by`, `order by`); else null. */
  label: string | null;
  profile: LocalProfile | null;
  children: OdtNode[];
}

export type OdtBuild = { ok: true; root: OdtNode; rewrites: string[] } | { ok: false; error: string };

/** The eight weighted features of Table 5. */
export type FeatureName = 'join' | 'where' | 'select' | 'tables' | 'groupBy' | 'counts' | 'orderBy' | 'distinct';

export type FeatureSims = Record<FeatureName, number>;

/** How one predicted node scored against one gold node, with the child matching that produced s_child. */
export interface NodeMatch {
  pred: OdtNode;
  gold: OdtNode;
  /** s_node. */
  score: number;
  /** s_local (SELECT nodes only). */
  local: number | null;
  features: FeatureSims | null;
  /** s_child; null for a SELECT pair where neither side nests (the term does not apply: s_node = s_local). */
  child: number | null;
  /** Matched child pairs, in gold order. */
  children: NodeMatch[];
  /** Gold children with no compatible predicted child (missing nested structures). */
  missing: OdtNode[];
  /** Predicted children left unmatched (redundant subqueries or CTEs). */
  extra: OdtNode[];
}

/** The twelve diagnostic tags of Table 7. */
export type OdtTag =
  | 'JOIN_MISSING'
  | 'JOIN_KEY_MISMATCH'
  | 'FROM_OR_JOIN_TABLE_MISMATCH'
  | 'WHERE_ERROR'
  | 'GROUP_BY_MISSING'
  | 'GROUP_BY_ERROR'
  | 'ORDER_BY_MISMATCH'
  | 'SELECT_ERROR'
  | 'AGGREGATE_ERROR'
  | 'DISTINCT_MISMATCH'
  | 'SUBQUERY_MISSING'
  | 'EXTRA_SUBQUERY_OR_CTE';
