/**
 * Reads a statement parsed by PostgreSQL's own parser (libpg-query) and finds the tenant tables it
 * reads or writes whose `account_id` it does not equate. Sharded by account (Citus), a statement
 * runs on one node only when every tenant table in it is pinned to the same account: `a.account_id =
 * b.account_id`, or each `= $1` (the same bound value), through joins, WHERE clauses, correlated and
 * lateral subqueries, CTEs' output columns and INSERT … SELECT's target column, transitively.
 *
 * Only equalities that always hold count: the AND-ed conjuncts of ON, WHERE and HAVING, and
 * `JOIN … USING (account_id)`; one under OR, NOT or CASE does not.
 */

type Json = { [key: string]: unknown };

interface TenantRef {
  id: string;
  table: string;
  alias: string;
}

interface Source {
  id: string;
  tenant?: TenantRef;
  /** Output columns of a CTE or subquery: name → the node it carries. */
  outputs?: Output[];
}

type Output = [name: string, node: string | null];
type Frame = Map<string, Source>;

const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : undefined;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
/** The node inside a `{ Kind: {...} }` wrapper, if it is of that kind. */
const as = (v: unknown, kind: string): Json | undefined => obj(obj(v)?.[kind]);
const sval = (v: unknown): string | undefined => str(as(v, "String")?.sval);
/** RETURNING's targets (PostgreSQL 18 wraps them in a clause). */
const returning = (s: Json): unknown[] => list(obj(s.returningClause)?.exprs ?? s.returningList);

export class TenantJoinCheck {
  private parent = new Map<string, string>();
  private refs: TenantRef[] = [];
  private counter = 0;

  constructor(private readonly tenantTables: ReadonlySet<string>) {}

  /**
   * Checks one parsed statement: how many tenant table references it has, and a description of
   * the groups of them not pinned to one account (null when there is at most one group).
   */
  static check(
    stmt: unknown,
    tenantTables: ReadonlySet<string>,
  ): { tables: number; violation: string | null } {
    const check = new TenantJoinCheck(tenantTables);
    check.statement(stmt, []);
    return { tables: check.refs.length, violation: check.verdict() };
  }

  private verdict(): string | null {
    const groups = new Map<string, TenantRef[]>();
    for (const r of this.refs) {
      const root = this.find(`${r.id}.account_id`);
      groups.set(root, [...(groups.get(root) ?? []), r]);
    }
    if (groups.size < 2) return null;
    const named = [...groups.values()].map((g) =>
      g.map((r) => (r.alias === r.table ? r.table : `${r.table} ${r.alias}`)).join(", "),
    );
    return `account_id not equated between [${named.join("] and [")}]`;
  }

  private find(x: string): string {
    let root = x;
    while (this.parent.has(root)) root = this.parent.get(root) as string;
    if (root !== x) this.parent.set(x, root);
    return root;
  }

  private union(a: string | null, b: string | null): void {
    if (a === null || b === null) return;
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(ra, rb);
  }

  private fresh(prefix: string): string {
    this.counter += 1;
    return `${prefix}#${this.counter}`;
  }

  /** Any statement; returns its output columns when it has some. */
  statement(node: unknown, frames: Frame[]): Output[] {
    const select = as(node, "SelectStmt");
    if (select) return this.select(select, frames);
    const insert = as(node, "InsertStmt");
    if (insert) return this.insert(insert, frames);
    const update = as(node, "UpdateStmt") ?? as(node, "DeleteStmt");
    if (update) return this.modify(update, frames);
    const raw = as(node, "RawStmt");
    if (raw) return this.statement(raw.stmt, frames);
    this.walk(node, frames);
    return [];
  }

  private withClause(w: unknown, frames: Frame[]): Frame[] {
    const ctes = list(obj(w)?.ctes);
    if (ctes.length === 0) return frames;
    const frame: Frame = new Map();
    const inner = [...frames, frame];
    for (const c of ctes) {
      const cte = as(c, "CommonTableExpr");
      if (!cte) continue;
      let outputs = this.statement(cte.ctequery, inner);
      const names = list(cte.aliascolnames).map(sval);
      if (names.length > 0) outputs = outputs.map(([n, v], i) => [names[i] ?? n, v]);
      frame.set(str(cte.ctename) ?? "", { id: this.fresh(`cte:${cte.ctename}`), outputs });
    }
    return inner;
  }

  private select(s: Json, outer: Frame[]): Output[] {
    const frames = this.withClause(s.withClause, outer);
    if (s.op && s.op !== "SETOP_NONE") {
      const left = this.statement({ SelectStmt: s.larg }, frames);
      const right = this.statement({ SelectStmt: s.rarg }, frames);
      left.forEach(([, node], i) => {
        this.union(node, right[i]?.[1] ?? null);
      });
      return left;
    }
    const frame: Frame = new Map();
    const scope = [...frames, frame];
    const conditions: unknown[] = [];
    for (const item of list(s.fromClause)) this.fromItem(item, frame, scope, conditions);
    for (const c of [...conditions, s.whereClause, s.havingClause]) this.conjuncts(c, scope);
    for (const row of list(s.valuesLists)) this.walk(row, scope);
    for (const part of [s.groupClause, s.sortClause, s.limitCount, s.limitOffset, s.distinctClause]) {
      this.walk(part, scope);
    }
    return this.targets(s.targetList, frame, scope);
  }

  private targets(targetList: unknown, frame: Frame, scope: Frame[]): Output[] {
    const out: Output[] = [];
    for (const t of list(targetList)) {
      const rt = as(t, "ResTarget");
      if (!rt) continue;
      this.walk(rt.val, scope);
      const fields = list(as(rt.val, "ColumnRef")?.fields);
      if (fields.some((f) => as(f, "A_Star"))) {
        const sources = fields.length > 1 ? [frame.get(sval(fields[0]) ?? "")] : [...frame.values()];
        for (const src of sources) if (src) out.push(...this.columnsOf(src));
        continue;
      }
      const name = str(rt.name) ?? sval(fields[fields.length - 1]) ?? "?column?";
      out.push([name, this.node(rt.val, scope)]);
    }
    return out;
  }

  private columnsOf(src: Source): Output[] {
    if (src.tenant) return [["account_id", `${src.tenant.id}.account_id`]];
    return src.outputs ?? [];
  }

  private fromItem(item: unknown, frame: Frame, scope: Frame[], conditions: unknown[]): void {
    const rv = as(item, "RangeVar");
    if (rv) {
      const { name, source } = this.relation(rv, scope);
      frame.set(name, source);
      return;
    }
    const join = as(item, "JoinExpr");
    if (join) {
      const before = new Set(frame.keys());
      this.fromItem(join.larg, frame, scope, conditions);
      const left = [...frame.keys()].filter((k) => !before.has(k));
      this.fromItem(join.rarg, frame, scope, conditions);
      const right = [...frame.keys()].filter((k) => !before.has(k) && !left.includes(k));
      for (const col of list(join.usingClause).map(sval)) {
        if (!col) continue;
        const nodes = [...left, ...right].map((k) => this.column(frame.get(k), col));
        for (const n of nodes) this.union(nodes[0] ?? null, n);
      }
      conditions.push(join.quals);
      return;
    }
    const sub = as(item, "RangeSubselect");
    if (sub) {
      const outputs = this.statement(sub.subquery, sub.lateral ? scope : scope.slice(0, -1));
      const alias = str(as(sub.alias, "Alias")?.aliasname ?? obj(sub.alias)?.aliasname) ?? this.fresh("sub");
      frame.set(alias, { id: this.fresh(`sub:${alias}`), outputs });
      return;
    }
    const fn = as(item, "RangeFunction");
    if (fn) {
      this.walk(fn.functions, scope);
      const alias = str(obj(fn.alias)?.aliasname) ?? this.fresh("fn");
      frame.set(alias, { id: this.fresh(`fn:${alias}`) });
      return;
    }
    this.walk(item, scope);
  }

  /** A table by name: a CTE in scope, a tenant table (a new reference), or another relation. */
  private relation(rv: Json, scope: Frame[]): { name: string; source: Source } {
    const table = str(rv.relname) ?? "";
    const name = str(obj(rv.alias)?.aliasname) ?? table;
    if (!rv.schemaname) {
      for (let i = scope.length - 1; i >= 0; i--) {
        const cte = scope[i]?.get(table);
        if (cte?.id.startsWith("cte:"))
          return { name, source: { id: this.fresh(`cte:${table}`), outputs: cte.outputs } };
      }
    }
    if (this.tenantTables.has(table)) {
      const ref: TenantRef = { id: this.fresh(table), table, alias: name };
      this.refs.push(ref);
      return { name, source: { id: ref.id, tenant: ref } };
    }
    return { name, source: { id: this.fresh(`rel:${table}`) } };
  }

  private column(src: Source | undefined, col: string): string | null {
    if (!src) return null;
    if (src.tenant) return `${src.tenant.id}.${col}`;
    const out = src.outputs?.find(([n]) => n === col);
    return out ? out[1] : `${src.id}.${col}`;
  }

  private insert(s: Json, outer: Frame[]): Output[] {
    const frames = this.withClause(s.withClause, outer);
    const rv = obj(s.relation) ?? {};
    const { name, source } = this.relation(rv, frames);
    const frame: Frame = new Map([[name, source]]);
    const scope = [...frames, frame];
    const cols = list(s.cols).map((c) => str(as(c, "ResTarget")?.name));
    const at = cols.indexOf("account_id");
    const target = source.tenant ? `${source.tenant.id}.account_id` : null;
    const select = as(s.selectStmt, "SelectStmt");
    if (select?.valuesLists) {
      for (const row of list(select.valuesLists)) {
        const items = list(as(row, "List")?.items);
        if (at >= 0) this.union(target, this.node(items[at], frames));
        this.walk(items, frames);
      }
    } else if (s.selectStmt) {
      const outputs = this.statement(s.selectStmt, frames);
      if (at >= 0) this.union(target, outputs[at]?.[1] ?? null);
    }
    const conflict = obj(as(s.onConflictClause, "OnConflictClause") ?? obj(s.onConflictClause));
    if (conflict) {
      this.conjuncts(conflict.whereClause, scope);
      this.walk(conflict.targetList, scope);
    }
    return this.targets(returning(s), frame, scope);
  }

  /** UPDATE … FROM and DELETE … USING. */
  private modify(s: Json, outer: Frame[]): Output[] {
    const frames = this.withClause(s.withClause, outer);
    const { name, source } = this.relation(obj(s.relation) ?? {}, frames);
    const frame: Frame = new Map([[name, source]]);
    const scope = [...frames, frame];
    const conditions: unknown[] = [];
    for (const item of [...list(s.fromClause), ...list(s.usingClause)]) {
      this.fromItem(item, frame, scope, conditions);
    }
    for (const c of [...conditions, s.whereClause]) this.conjuncts(c, scope);
    this.walk(s.targetList, scope);
    return this.targets(returning(s), frame, scope);
  }

  /** The AND-ed equalities of a condition join their sides; everything else is only walked. */
  private conjuncts(expr: unknown, scope: Frame[]): void {
    const bool = as(expr, "BoolExpr");
    if (bool?.boolop === "AND_EXPR") {
      for (const arg of list(bool.args)) this.conjuncts(arg, scope);
      return;
    }
    const op = as(expr, "A_Expr");
    if (op?.kind === "AEXPR_OP" && list(op.name).map(sval).join(".") === "=") {
      this.union(this.node(op.lexpr, scope), this.node(op.rexpr, scope));
    }
    const link = as(expr, "SubLink");
    if (link?.subLinkType === "ANY_SUBLINK") {
      const outputs = this.statement(link.subselect, scope);
      const row = as(link.testexpr, "RowExpr");
      const tested = row ? list(row.args) : [link.testexpr];
      tested.forEach((t, i) => {
        this.union(this.node(t, scope), outputs[i]?.[1] ?? null);
      });
      this.walk(link.testexpr, scope);
      return;
    }
    this.walk(expr, scope);
  }

  /** What an expression stands for, when it can be equated: a column, a parameter, a constant. */
  private node(expr: unknown, scope: Frame[]): string | null {
    const cast = as(expr, "TypeCast");
    if (cast) return this.node(cast.arg, scope);
    const param = as(expr, "ParamRef");
    if (param) return `$${param.number}`;
    const konst = as(expr, "A_Const");
    if (konst) return `const:${JSON.stringify(konst)}`;
    const call = as(expr, "FuncCall");
    if (call && list(call.args).length === 0) return `fn:${list(call.funcname).map(sval).join(".")}`;
    const ref = as(expr, "ColumnRef");
    if (!ref) return null;
    const fields = list(ref.fields).map(sval);
    if (fields.some((f) => f === undefined)) return null;
    const col = fields[fields.length - 1] as string;
    if (fields.length >= 2) {
      const alias = fields[fields.length - 2] as string;
      for (let i = scope.length - 1; i >= 0; i--) {
        const src = scope[i]?.get(alias);
        if (src) return this.column(src, col);
      }
      return `?${alias}.${col}`; // NEW and OLD in a trigger, EXCLUDED, a PL/pgSQL record
    }
    for (let i = scope.length - 1; i >= 0; i--) {
      const frame = scope[i] as Frame;
      const holders = [...frame.values()].filter(
        (s) => (s.tenant && col === "account_id") || s.outputs?.some(([n]) => n === col),
      );
      if (holders.length > 0) return this.column(holders[0], col);
    }
    return `?${col}`;
  }

  /** Finds the statements nested in an expression (subqueries) and checks them in this scope. */
  private walk(node: unknown, scope: Frame[]): void {
    if (Array.isArray(node)) {
      for (const n of node) this.walk(n, scope);
      return;
    }
    const o = obj(node);
    if (!o) return;
    const link = as(o, "SubLink");
    if (link) {
      this.walk(link.testexpr, scope);
      this.statement(link.subselect, scope);
      return;
    }
    for (const kind of ["SelectStmt", "InsertStmt", "UpdateStmt", "DeleteStmt"]) {
      if (o[kind]) {
        this.statement(o, scope);
        return;
      }
    }
    for (const v of Object.values(o)) this.walk(v, scope);
  }
}
