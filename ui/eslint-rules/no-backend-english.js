// A lint rule against English the backend sends reaching the screen. The literal-string rule
// (i18next/no-literal-string) sees words written in the code; this one sees words that
// arrive at run time: a field of a backend type rendered as it is, when the backend sends
// the same message as a Text beside it (`summary` beside `summary_text`, `object` beside
// `object_text`, …) or when the field is known to be English or a code (listed in
// `fields` as "Type.field").
//
// "Rendered" means the field's value is shown: it is a JSX child or attribute expression, or
// a value in the arguments of a t() call (it then fills a translated sentence), alone or
// inside a conditional, `??`/`||`, the right of `&&`, a template literal or a `+` concatenation. The
// fallback `x.f_text ? textOf(x.f_text) : x.f` (the English when no Text came) is allowed,
// and so are attributes no one reads (`key`, `className`, `data-*`, …: `ignoreAttributes`).
// The types come from TypeScript (typed linting), so a `warning` of an unrelated type with
// no `warning_text` is not flagged.

/** @type {import("eslint").Rule.RuleModule} */
export default {
  meta: {
    type: "problem",
    docs: { description: "no English field from the backend rendered where it sends a Text, or that is known English" },
    schema: [
      {
        type: "object",
        properties: {
          fields: { type: "array", items: { type: "string" } },
          // Attributes no one reads (key, className, data-*…), as patterns.
          ignoreAttributes: { type: "array", items: { type: "string" } },
        },
        additionalProperties: false,
      },
    ],
    messages: {
      hasText: "'{{field}}' is the backend's English; render '{{field}}_text' with textOf() instead.",
      known: "'{{type}}.{{field}}' is English or a code from the backend; render it through the catalogs.",
    },
  },
  create(context) {
    const services = context.sourceCode.parserServices;
    if (!services?.program || !services.esTreeNodeToTSNodeMap) return {};
    const checker = services.program.getTypeChecker();
    const known = new Set(context.options[0]?.fields ?? []);
    const unread = (context.options[0]?.ignoreAttributes ?? []).map((p) => new RegExp(`^(${p})$`));

    /// The names a type goes by (its alias and its symbol), for each member of a union.
    function typeNames(type) {
      const parts = type.isUnion() ? type.types : [type];
      const names = new Set();
      if (type.aliasSymbol) names.add(type.aliasSymbol.name);
      for (const p of parts) {
        if (p.aliasSymbol) names.add(p.aliasSymbol.name);
        if (p.symbol) names.add(p.symbol.name);
      }
      return names;
    }

    /// Whether any non-null member of the type has a property `name`.
    function hasProperty(type, name) {
      const parts = type.isUnion() ? type.types : [type];
      return parts.some((p) => p.getProperty(name) !== undefined);
    }

    /// The expression whose value is shown, if `node`'s value ends up shown.
    function rendered(node) {
      let child = node;
      let parent = node.parent;
      for (;;) {
        if (parent.type === "ChainExpression" || parent.type === "TSNonNullExpression") {
          /* the same value */
        } else if (parent.type === "LogicalExpression" && parent.operator === "&&" && parent.left === child) {
          return false; // a condition: shown is the right side
        } else if (parent.type === "LogicalExpression" || parent.type === "TemplateLiteral") {
          /* part of the value */
        } else if (parent.type === "BinaryExpression" && parent.operator === "+") {
          /* concatenated */
        } else if (parent.type === "ConditionalExpression" && parent.test !== child) {
          if (isTextFallback(parent, child)) return false;
        } else break;
        child = parent;
        parent = parent.parent;
      }
      if (parent.type === "JSXExpressionContainer") {
        const attr = parent.parent;
        if (attr.type !== "JSXAttribute") return true;
        const name = context.sourceCode.getText(attr.name);
        return !unread.some((r) => r.test(name));
      }
      // A value filling a t() call's placeholder.
      if (parent.type === "Property" && parent.value === child) {
        const obj = parent.parent;
        const call = obj.parent;
        if (obj.type === "ObjectExpression" && call?.type === "CallExpression" && call.arguments.includes(obj)) {
          const callee = call.callee;
          const name = callee.type === "Identifier" ? callee.name : callee.type === "MemberExpression" ? callee.property.name : null;
          return name === "t";
        }
      }
      return false;
    }

    /// `x.f_text ? … : x.f`: the English only where no Text came.
    function isTextFallback(cond, branch) {
      if (cond.alternate !== branch) return false;
      const src = context.sourceCode.getText(cond.test);
      const member = branch.type === "ChainExpression" ? branch.expression : branch;
      return member.type === "MemberExpression" && src.includes(`${context.sourceCode.getText(member)}_text`);
    }

    return {
      MemberExpression(node) {
        if (node.computed || node.property.type !== "Identifier") return;
        const field = node.property.name;
        if (field.endsWith("_text")) return;
        const subject = node.parent.type === "ChainExpression" ? node.parent : node;
        const objType = checker.getNonNullableType(services.getTypeAtLocation(node.object));
        const withText = hasProperty(objType, `${field}_text`);
        const type = [...typeNames(objType)].find((n) => known.has(`${n}.${field}`));
        if (!withText && !type) return;
        if (!rendered(subject)) return;
        if (withText) context.report({ node, messageId: "hasText", data: { field } });
        else context.report({ node, messageId: "known", data: { type, field } });
      },
    };
  },
};
