/**
 * The SQL statements of src/, read statically: every drizzle `sql` template that starts a statement
 * (select, with, insert, update, delete), rendered to text as PostgreSQL would receive it.
 *
 * Why statically (TypeScript's compiler and type checker) rather than by running the queries: a run
 * sees only the branches its inputs take, while this sees every template and every branch. A
 * substitution is rendered by what it is:
 * - a value (its type is not one of drizzle's) → a bound parameter `$n`, the same `$n` for the same
 *   expression, so `c.account_id = ${accountId}` and `e.account_id = ${accountId}` equate both;
 * - a nested `sql` template, a constant holding one, a helper function returning one (inlined with
 *   its arguments bound) → its text; a conditional → one variant per branch (all combinations);
 * - `sql.join(list.map(x => sql…))` → one element; `sql.raw(s)` → `s` evaluated when it is built
 *   from constants (literals, templates, `map`/`filter`/`join` over constant arrays), else an opaque
 *   identifier (its columns or table unknown to the check).
 * A statement that still cannot be rendered or parsed is reported, never skipped.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { type Binding, ConstantEvaluator, type Env, returnedExpressions, unwrap } from "./sql-constants.ts";

export interface SqlStatement {
  /** Path relative to the repository root, and 1-based line of the template. */
  file: string;
  line: number;
  /** One rendering per combination of conditional branches. */
  variants: string[];
}

const MAX_VARIANTS = 512;
const STATEMENT_START = /^\s*(?:--[^\n]*\n\s*)*(?:\(\s*)?(select|with|insert|update|delete|values|merge)\b/i;
/** Marks an opaque `sql.raw` piece; adjacent ones merge into one identifier after rendering. */
const OPAQUE = "\u0000";

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name));
}

function isSqlTag(node: ts.Node): node is ts.TaggedTemplateExpression {
  return ts.isTaggedTemplateExpression(node) && node.tag.getText() === "sql";
}

function product(parts: string[][]): string[] {
  let out = [""];
  for (const choices of parts) {
    const next: string[] = [];
    for (const prefix of out) for (const c of choices) next.push(prefix + c);
    if (next.length > MAX_VARIANTS) throw new Error(`more than ${MAX_VARIANTS} variants`);
    out = next;
  }
  return out;
}

class Renderer {
  private params = new Map<string, number>();
  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly evalString: (expr: ts.Expression, env: Env) => string | undefined,
  ) {}

  /** Renders a top-level template; parameters are numbered per statement. */
  statement(node: ts.TaggedTemplateExpression): string[] {
    this.params = new Map();
    return this.template(node, new Map()).map((text) =>
      text.replace(
        new RegExp(`${OPAQUE}[^${OPAQUE}]*${OPAQUE}(\\s*${OPAQUE}[^${OPAQUE}]*${OPAQUE})*`, "g"),
        (m) => {
          const names = m.split(OPAQUE).filter((s) => s.trim() !== "");
          return `"raw:${names.join("+").replaceAll('"', "")}"`;
        },
      ),
    );
  }

  private template(node: ts.TaggedTemplateExpression, env: Env): string[] {
    const t = node.template;
    if (ts.isNoSubstitutionTemplateLiteral(t)) return [t.text];
    const parts: string[][] = [[t.head.text]];
    for (const span of t.templateSpans) {
      parts.push(this.substitution(span.expression, env));
      parts.push([span.literal.text]);
    }
    return product(parts);
  }

  /**
   * Whether a substitution is SQL (rendered in place) or a value (bound): decided from the source,
   * not from types, so the program needs no library declarations and builds in about a second.
   */
  private isFragment(expr: ts.Expression, env: Env, seen = new Set<ts.Node>()): boolean {
    const e = unwrap(expr);
    if (seen.has(e)) return false;
    seen.add(e);
    if (isSqlTag(e)) return true;
    if (ts.isConditionalExpression(e)) {
      return this.isFragment(e.whenTrue, env, seen) || this.isFragment(e.whenFalse, env, seen);
    }
    if (ts.isCallExpression(e)) {
      if (/^sql\.\w+$/.test(e.expression.getText())) return true;
      const fn = this.functionOf(e.expression);
      return fn ? returnedExpressions(fn).some((r) => this.isFragment(r, new Map(), seen)) : false;
    }
    if (ts.isIdentifier(e)) {
      const bound = this.bound(e, env);
      if (bound) return this.isFragment(bound.expr, bound.env, seen);
      const decl = this.declarationOf(e);
      if (decl && ts.isVariableDeclaration(decl) && decl.initializer) {
        return this.isFragment(decl.initializer, new Map(), seen);
      }
      if (decl && ts.isParameter(decl)) return /\bSQL\b/.test(decl.type?.getText() ?? "");
    }
    return false;
  }

  private functionOf(callee: ts.Expression): ts.SignatureDeclaration | undefined {
    const decl = this.declarationOf(callee);
    const fn = decl && ts.isVariableDeclaration(decl) && decl.initializer ? unwrap(decl.initializer) : decl;
    return fn && (ts.isArrowFunction(fn) || ts.isFunctionDeclaration(fn) || ts.isFunctionExpression(fn))
      ? fn
      : undefined;
  }

  private value(expr: ts.Expression, env: Env): string {
    const e = unwrap(expr);
    if (ts.isIdentifier(e)) {
      const bound = this.bound(e, env);
      if (bound) return this.value(bound.expr, bound.env);
    }
    const key = e.getText().replace(/\s+/g, "");
    let n = this.params.get(key);
    if (n === undefined) {
      n = this.params.size + 1;
      this.params.set(key, n);
    }
    return `$${n}`;
  }

  private bound(id: ts.Identifier, env: Env): Binding | undefined {
    const symbol = this.checker.getSymbolAtLocation(id);
    return symbol ? env.get(symbol) : undefined;
  }

  private declarationOf(expr: ts.Expression): ts.Declaration | undefined {
    let symbol = this.checker.getSymbolAtLocation(expr);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    return symbol?.valueDeclaration ?? symbol?.declarations?.[0];
  }

  /** A substitution: a value becomes `$n`; a fragment is rendered in place. */
  private substitution(expr: ts.Expression, env: Env): string[] {
    const e = unwrap(expr);
    if (!this.isFragment(e, env)) return [this.value(e, env)];
    return this.fragment(e, env);
  }

  private fragment(expr: ts.Expression, env: Env): string[] {
    const e = unwrap(expr);
    if (isSqlTag(e)) return this.template(e, env);
    if (ts.isConditionalExpression(e)) {
      return [...this.fragment(e.whenTrue, env), ...this.fragment(e.whenFalse, env)];
    }
    if (ts.isIdentifier(e)) {
      const bound = this.bound(e, env);
      if (bound) return this.fragment(bound.expr, bound.env);
      const decl = this.declarationOf(e);
      if (decl && ts.isVariableDeclaration(decl) && decl.initializer) {
        return this.fragment(decl.initializer, new Map());
      }
      return [`${OPAQUE}${e.text}${OPAQUE}`];
    }
    if (ts.isCallExpression(e)) return this.call(e, env);
    return [`${OPAQUE}${e.getText().slice(0, 40)}${OPAQUE}`];
  }

  private call(call: ts.CallExpression, env: Env): string[] {
    const callee = call.expression;
    const name = callee.getText();
    if (name === "sql.raw") {
      const arg = call.arguments[0];
      const text = arg ? this.evalString(arg, env) : "";
      return [text ?? `${OPAQUE}${arg?.getText().slice(0, 40)}${OPAQUE}`];
    }
    if (name === "sql.empty") return [""];
    if (name === "sql.join") return this.join(call, env);
    const fn = this.functionOf(callee);
    if (fn) {
      const inner: Env = new Map();
      fn.parameters.forEach((p, i) => {
        const arg = call.arguments[i] ?? p.initializer;
        const symbol = this.checker.getSymbolAtLocation(p.name);
        if (arg && symbol) inner.set(symbol, { expr: arg, env: arg === p.initializer ? inner : env });
      });
      const returns = returnedExpressions(fn);
      if (returns.length > 0) return returns.flatMap((r) => this.fragment(r, inner));
    }
    return [`${OPAQUE}${name}()${OPAQUE}`];
  }

  /** `sql.join(xs.map((x) => sql…), sep)`: one element stands for the list. */
  private join(call: ts.CallExpression, env: Env): string[] {
    const list = call.arguments[0] ? unwrap(call.arguments[0]) : undefined;
    if (list && ts.isCallExpression(list) && ts.isPropertyAccessExpression(list.expression)) {
      const mapper = list.arguments[0];
      if (list.expression.name.text === "map" && mapper && ts.isArrowFunction(mapper)) {
        return returnedExpressions(mapper).flatMap((r) => this.substitution(r, env));
      }
    }
    if (list && ts.isArrayLiteralExpression(list) && list.elements.length > 0) {
      const sep = call.arguments[1] ? this.fragment(call.arguments[1], env) : [""];
      const items = list.elements.map((el) => this.substitution(el, env));
      return product(items.flatMap((item, i) => (i === 0 ? [item] : [sep, item])));
    }
    return [this.value(call, env)];
  }
}

/** Every SQL statement written as a drizzle template under `dirs` (absolute paths). */
export function sqlStatements(root: string, dirs: string[]): SqlStatement[] {
  // Every source file, parsed and bound but not type-checked against libraries (noLib, noResolve):
  // symbols still resolve across src/, which is all the rendering needs, in about a second.
  const files = dirs.flatMap(filesUnder);
  const program = ts.createProgram(files, {
    noLib: true,
    noResolve: true,
    types: [],
    allowImportingTsExtensions: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
  });
  const checker = program.getTypeChecker();
  const evaluator = new ConstantEvaluator(checker);
  const renderer = new Renderer(checker, (e, env) => evaluator.string(e, env));
  const out: SqlStatement[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (!source) continue;
    const visit = (node: ts.Node) => {
      if (isSqlTag(node)) {
        const head = ts.isNoSubstitutionTemplateLiteral(node.template)
          ? node.template.text
          : node.template.head.text;
        if (STATEMENT_START.test(head)) {
          const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          const rel = file.slice(root.length + 1);
          let variants: string[];
          try {
            variants = renderer.statement(node);
          } catch (err) {
            variants = [`-- cannot render: ${(err as Error).message}`];
          }
          out.push({ file: rel, line, variants });
        }
        return; // templates nested in a statement are rendered with it
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}
