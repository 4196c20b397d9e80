/**
 * Strings computed from constants of the source, for `sql.raw` (see sql-sources.ts): column lists
 * and the like, built at module load from constant arrays, evaluated here without running them.
 */
import ts from "typescript";
/** A substitution's binding when a helper is inlined: its argument, in the caller's bindings. */
export interface Binding {
  expr: ts.Expression;
  env: Env;
}

export type Env = Map<ts.Symbol, Binding>;

/** An expression without the parentheses and type assertions around it. */
export function unwrap(expr: ts.Expression): ts.Expression {
  let e = expr;
  while (
    ts.isParenthesizedExpression(e) ||
    ts.isAsExpression(e) ||
    ts.isSatisfiesExpression(e) ||
    ts.isNonNullExpression(e)
  ) {
    e = e.expression;
  }
  return e;
}

/** The expressions a function returns (not those of functions nested in it). */
export function returnedExpressions(fn: ts.SignatureDeclaration): ts.Expression[] {
  const body = (fn as ts.FunctionLikeDeclarationBase).body;
  if (!body) return [];
  if (!ts.isBlock(body)) return [body];
  const out: ts.Expression[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n)) return;
    if (ts.isReturnStatement(n) && n.expression) out.push(n.expression);
    ts.forEachChild(n, visit);
  };
  ts.forEachChild(body, visit);
  return out;
}

type Constant = string | number | boolean | null | Constant[];

/**
 * Strings built from constants of the source, for `sql.raw`: literals, templates, `+`, `===`,
 * identifiers bound to arguments or to initialised constants, array literals, and an array's
 * `map`, `filter` and `join` with arrow functions (array-destructured parameters included).
 */
export class ConstantEvaluator {
  constructor(private readonly checker: ts.TypeChecker) {}

  string(expr: ts.Expression, env: Env): string | undefined {
    const v = this.value(expr, env);
    return typeof v === "string" ? v : undefined;
  }

  private value(expr: ts.Expression, env: Env): Constant | undefined {
    const e = unwrap(expr);
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
    if (ts.isNumericLiteral(e)) return Number(e.text);
    if (e.kind === ts.SyntaxKind.TrueKeyword) return true;
    if (e.kind === ts.SyntaxKind.FalseKeyword) return false;
    if (e.kind === ts.SyntaxKind.NullKeyword) return null;
    if (ts.isTemplateExpression(e)) {
      let s = e.head.text;
      for (const span of e.templateSpans) {
        const v = this.value(span.expression, env);
        if (v === undefined || Array.isArray(v)) return undefined;
        s += String(v) + span.literal.text;
      }
      return s;
    }
    if (ts.isArrayLiteralExpression(e)) {
      const items: Constant[] = [];
      for (const el of e.elements) {
        // `[...A, ...B]`: the constant arrays' items, in order
        const v = this.value(ts.isSpreadElement(el) ? el.expression : el, env);
        if (v === undefined || (ts.isSpreadElement(el) && !Array.isArray(v))) return undefined;
        if (ts.isSpreadElement(el)) items.push(...(v as Constant[]));
        else items.push(v);
      }
      return items;
    }
    if (ts.isBinaryExpression(e)) return this.binary(e, env);
    if (ts.isIdentifier(e)) return this.identifier(e, env);
    if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) return this.method(e, env);
    return undefined;
  }

  private binary(e: ts.BinaryExpression, env: Env): Constant | undefined {
    const l = this.value(e.left, env);
    const r = this.value(e.right, env);
    if (l === undefined || r === undefined) return undefined;
    switch (e.operatorToken.kind) {
      case ts.SyntaxKind.PlusToken:
        return typeof l === "number" && typeof r === "number" ? l + r : String(l) + String(r);
      case ts.SyntaxKind.EqualsEqualsEqualsToken:
        return l === r;
      case ts.SyntaxKind.ExclamationEqualsEqualsToken:
        return l !== r;
      default:
        return undefined;
    }
  }

  private identifier(e: ts.Identifier, env: Env): Constant | undefined {
    let symbol = this.checker.getSymbolAtLocation(e);
    if (!symbol) return undefined;
    const bound = env.get(symbol);
    if (bound) return this.value(bound.expr, bound.env);
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    const decl = symbol.valueDeclaration;
    if (decl && ts.isVariableDeclaration(decl) && decl.initializer && ts.isIdentifier(decl.name)) {
      return this.value(decl.initializer, new Map());
    }
    return undefined;
  }

  private method(e: ts.CallExpression, env: Env): Constant | undefined {
    const access = e.expression as ts.PropertyAccessExpression;
    const target = this.value(access.expression, env);
    if (!Array.isArray(target)) return undefined;
    const method = access.name.text;
    const arg = e.arguments[0];
    if (method === "join") {
      const sep = arg ? this.value(arg, env) : ",";
      if (typeof sep !== "string" || target.some((t) => Array.isArray(t))) return undefined;
      return target.map((t) => (t === null ? "" : String(t))).join(sep);
    }
    if ((method === "map" || method === "filter") && arg && ts.isArrowFunction(arg)) {
      const out: Constant[] = [];
      for (const item of target) {
        const inner = this.bindParameter(arg, item, env);
        const body = returnedExpressions(arg)[0];
        const v = inner && body ? this.value(body, inner) : undefined;
        if (v === undefined) return undefined;
        if (method === "map") out.push(v);
        else if (v === true) out.push(item);
      }
      return out;
    }
    return undefined;
  }

  /** Binds an arrow function's first parameter (a name or an array pattern) to `item`. */
  private bindParameter(fn: ts.ArrowFunction, item: Constant, env: Env): Env | undefined {
    const p = fn.parameters[0];
    if (!p) return new Map(env);
    const inner: Env = new Map(env);
    const bind = (name: ts.BindingName, value: Constant): boolean => {
      if (ts.isIdentifier(name)) {
        const symbol = this.checker.getSymbolAtLocation(name);
        if (!symbol) return false;
        inner.set(symbol, { expr: literal(value), env: new Map() });
        return true;
      }
      if (ts.isArrayBindingPattern(name) && Array.isArray(value)) {
        return name.elements.every((el, i) => ts.isOmittedExpression(el) || bind(el.name, value[i] ?? null));
      }
      return false;
    };
    return bind(p.name, item) ? inner : undefined;
  }
}

/** A synthetic expression node standing for a constant (bound to a mapped parameter). */
function literal(value: Constant): ts.Expression {
  if (Array.isArray(value)) return ts.factory.createArrayLiteralExpression(value.map(literal));
  if (typeof value === "string") return ts.factory.createStringLiteral(value);
  if (typeof value === "number") return ts.factory.createNumericLiteral(value);
  if (typeof value === "boolean") return value ? ts.factory.createTrue() : ts.factory.createFalse();
  return ts.factory.createNull();
}
