// The TypeScript compiler (5.x) as the oracle of IGG's TypeScript/JavaScript maps.
// Usage: node oracle.js ROOT < files.json   (files: paths relative to ROOT, the files IGG maps)
// Prints {"imports": {file: [[specifier, resolvedRelativePathOrNull, externalPackageOrNull], ...]},
//         "calls": [[callerFile, callerName, calleeFile, calleeName], ...],
//         "types": [[file, name, kind], ...]}   (classes, interfaces, enums; NS.Name inside namespaces)
// Imports: every module specifier of the file's syntax tree (ES imports and export-from, `export * as ns from`,
// which ts.preProcessFile misses, type-only ones, import types, import(), require(), import x = require()),
// resolved by ts.resolveModuleName with the options of the nearest tsconfig/jsconfig.
// Calls: one program over the files; each call or new expression resolved by the checker to its declaration;
// the caller is the outermost top-level callable around it (function, const-bound function, class member).
const ts = require(process.env.IGG_TS_MODULE || "typescript");
const path = require("path");
const fs = require("fs");

const root = fs.realpathSync(path.resolve(process.argv[2]));
const files = JSON.parse(fs.readFileSync(0, "utf8"));
const rel = (abs) => path.relative(root, abs).split(path.sep).join("/");
const inTree = (abs) => !rel(abs).startsWith("..") && !rel(abs).split("/").includes("node_modules");

const configs = new Map();
function optionsFor(file) {
  let dir = path.dirname(path.join(root, file));
  while (true) {
    for (const name of ["tsconfig.json", "jsconfig.json"]) {
      const candidate = path.join(dir, name);
      if (fs.existsSync(candidate)) {
        if (!configs.has(candidate)) {
          const read = ts.readConfigFile(candidate, ts.sys.readFile);
          const parsed = ts.parseJsonConfigFileContent(read.config || {}, ts.sys, dir);
          configs.set(candidate, {...parsed.options, allowJs: true, resolveJsonModule: false, traceResolution: false});
        }
        return configs.get(candidate);
      }
    }
    if (dir === root || path.dirname(dir) === dir) return {allowJs: true};
    dir = path.dirname(dir);
  }
}

function packageName(spec) {
  const s = spec.startsWith("node:") ? spec.slice(5) : spec;
  const parts = s.split("/");
  return s.startsWith("@") && parts.length > 1 ? parts.slice(0, 2).join("/") : parts[0];
}

function specifiers(abs) {
  const sf = ts.createSourceFile(abs, fs.readFileSync(abs, "utf8"), ts.ScriptTarget.Latest, true);
  const found = [];
  const literal = (node) => node && ts.isStringLiteralLike(node) ? found.push(node.text) : undefined;
  const visit = (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      literal(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.arguments.length
             && (node.expression.kind === ts.SyntaxKind.ImportKeyword
                 || ts.isIdentifier(node.expression) && node.expression.text === "require"))
      literal(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const imports = {};
for (const file of files) {
  const abs = path.join(root, file);
  const options = optionsFor(file);
  imports[file] = specifiers(abs).map((fileName) => {
    const found = ts.resolveModuleName(fileName, abs, options, ts.sys).resolvedModule;
    if (found && inTree(fs.realpathSync(found.resolvedFileName))) {
      return [fileName, rel(fs.realpathSync(found.resolvedFileName)), null];
    }
    const relative = fileName.startsWith("./") || fileName.startsWith("../") || fileName === "." || fileName === "..";
    return [fileName, null, relative || fileName.startsWith("/") ? null : packageName(fileName)];
  });
}

const calls = [];
const types = [];
if (process.env.IGG_TS_CALLS !== "0") {
  const groups = new Map();  // one program per governing tsconfig, with its options
  for (const f of files) {
    const options = optionsFor(f);
    if (!groups.has(options)) groups.set(options, []);
    groups.get(options).push(f);
  }
  const topLevel = (node) => node.parent && (ts.isSourceFile(node.parent) || ts.isModuleBlock(node.parent));
  const scope = (node) => {  // namespace prefix of a top-level declaration
    const names = [];
    for (let p = node.parent; p; p = p.parent) {
      if (ts.isModuleDeclaration(p) && ts.isIdentifier(p.name)) names.unshift(p.name.text);
      else if (ts.isModuleDeclaration(p) && p.name.kind === ts.SyntaxKind.GlobalKeyword) names.unshift("global");
    }
    return names.length ? names.join(".") + "." : "";
  };
  const memberName = (m) => ts.isConstructorDeclaration(m) ? "constructor" : (m.name && m.name.getText());
  const isFunction = (n) => ts.isArrowFunction(n) || ts.isFunctionExpression(n);
  const callableNode = (n) => ts.isFunctionDeclaration(n) || isFunction(n) || ts.isMethodDeclaration(n)
    || ts.isConstructorDeclaration(n) || ts.isGetAccessor(n) || ts.isSetAccessor(n);
  // Nested declarations are named by their nearest enclosing named callable: "outer.inner", "Class.method.inner",
  // "outer.Local" (anonymous functions in between add nothing); a type in no named callable by its own name.
  function enclosing(node) {
    for (let p = node.parent; p; p = p.parent) {
      if (callableNode(p)) {
        const n = named(p);
        if (n) return n;
      }
    }
    return null;
  }
  function typeName(node) {  // a class, interface or enum's name, or null
    if (!node.name) return topLevel(node) ? "default" : null;
    if (topLevel(node)) return scope(node) + node.name.text;
    let inFunction = false;
    for (let p = node.parent; p; p = p.parent) if (callableNode(p)) inFunction = true;
    if (!inFunction) return null;
    const outer = enclosing(node);
    return outer ? outer + "." + node.name.text : node.name.text;
  }
  const moduleLevelObject = (o) => ts.isObjectLiteralExpression(o) && (
    ts.isVariableDeclaration(o.parent) && ts.isIdentifier(o.parent.name) && o.parent.parent.parent
      && topLevel(o.parent.parent.parent) ? o.parent.name.text
      : ts.isExportAssignment(o.parent) && !o.parent.isExportEquals ? "default" : null);
  function named(decl) {  // the name IGG gives a callable declaration, or null
    if (!decl) return null;
    if (ts.isFunctionTypeNode(decl) && ts.isVariableDeclaration(decl.parent) && decl.parent.type === decl
        && decl.parent.initializer)  // const f: (x: T) => U = (x) => ...: the call reaches f
      return named(decl.parent);
    if ((ts.isFunctionDeclaration(decl)) && topLevel(decl) && decl.name) return scope(decl) + decl.name.text;
    if (isFunction(decl) && ts.isVariableDeclaration(decl.parent)
        && ts.isIdentifier(decl.parent.name) && decl.parent.parent.parent && topLevel(decl.parent.parent.parent))
      return scope(decl.parent.parent.parent) + decl.parent.name.text;
    if (ts.isVariableDeclaration(decl) && decl.initializer && ts.isIdentifier(decl.name)
        && isFunction(decl.initializer) && decl.parent.parent && topLevel(decl.parent.parent))
      return scope(decl.parent.parent) + decl.name.text;
    // nested in a named callable
    if (ts.isFunctionDeclaration(decl) && decl.name) {
      const outer = enclosing(decl);
      return outer ? outer + "." + decl.name.text : null;
    }
    if (isFunction(decl) && ts.isVariableDeclaration(decl.parent) && ts.isIdentifier(decl.parent.name)
        && decl.parent.initializer === decl) {
      const outer = enclosing(decl.parent);
      return outer ? outer + "." + decl.parent.name.text : null;
    }
    if (ts.isVariableDeclaration(decl) && decl.initializer && ts.isIdentifier(decl.name) && isFunction(decl.initializer)) {
      const outer = enclosing(decl);
      return outer ? outer + "." + decl.name.text : null;
    }
    // CommonJS: exports.a = function () {...} (or module.exports.a) at module level: "a"
    if (isFunction(decl) && ts.isBinaryExpression(decl.parent) && decl.parent.right === decl
        && decl.parent.operatorToken.kind === ts.SyntaxKind.EqualsToken
        && ts.isPropertyAccessExpression(decl.parent.left) && ts.isExpressionStatement(decl.parent.parent)
        && topLevel(decl.parent.parent)) {
      const object = decl.parent.left.expression.getText();
      if (object === "exports" || object === "module.exports") return decl.parent.left.name.text;
    }
    // a method or function member of a module-level object literal: "api.get", "default.get"
    if (ts.isMethodDeclaration(decl) && ts.isIdentifier(decl.name) && moduleLevelObject(decl.parent))
      return moduleLevelObject(decl.parent) + "." + decl.name.text;
    if (isFunction(decl) && ts.isPropertyAssignment(decl.parent) && ts.isIdentifier(decl.parent.name)
        && moduleLevelObject(decl.parent.parent))
      return moduleLevelObject(decl.parent.parent) + "." + decl.parent.name.text;
    const owner = decl.parent;
    if ((ts.isMethodDeclaration(decl) || ts.isConstructorDeclaration(decl) || ts.isMethodSignature(decl)
         || ts.isGetAccessor(decl) || ts.isSetAccessor(decl))
        && owner && (ts.isClassDeclaration(owner) || ts.isInterfaceDeclaration(owner)) && typeName(owner))
      return typeName(owner) + "." + memberName(decl);
    return null;
  }
  const wanted = new Set(files);
  for (const [options, group] of groups) {
  const program = ts.createProgram(group.map((f) => path.join(root, f)), {...options, noEmit: true});
  const checker = program.getTypeChecker();
  const mine = new Set(group);
  for (const sf of program.getSourceFiles()) {
    if (!inTree(sf.fileName) || !mine.has(rel(sf.fileName))) continue;
    const visit = (node, caller) => {
      if ((ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node) || ts.isEnumDeclaration(node)) && typeName(node)) {
        const kind = ts.isClassDeclaration(node) ? "class" : ts.isInterfaceDeclaration(node) ? "interface" : "enum";
        types.push([rel(sf.fileName), typeName(node), kind]);
      }
      const here = named(node);
      const current = here || caller;  // the innermost named callable
      if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && current
          && node.expression.kind !== ts.SyntaxKind.ImportKeyword) {
        const signature = checker.getResolvedSignature(node);
        let decl = signature && signature.declaration;
        if (!decl || !ts.isJSDocSignature(decl) && !named(decl)) {
          // a function held by a variable of a declared function type (const f: F = (x) => ...): the callee
          // is that variable, found through the called name's symbol
          let symbol = checker.getSymbolAtLocation(node.expression);
          if (symbol && (symbol.flags & ts.SymbolFlags.Alias)) symbol = checker.getAliasedSymbol(symbol);
          const value = symbol && symbol.valueDeclaration;
          if (value && ts.isVariableDeclaration(value) && named(value)) decl = value;
        }
        if (decl && !ts.isJSDocSignature(decl)) {
          const target = decl.getSourceFile().fileName;
          const callee = named(decl);
          if (callee && inTree(target) && wanted.has(rel(target)))
            calls.push([rel(sf.fileName), current, rel(target), callee]);
        }
      }
      ts.forEachChild(node, (child) => visit(child, current));
    };
    visit(sf, null);
  }
  }
}
process.stdout.write(JSON.stringify({imports, calls, types}));
