// The Go oracle of IGG's Go maps: go/ast's declarations and go/types' resolved calls of the packages
// `go list -json` reported (read as a JSON array on stdin; argv[1] is the mapped root).
//
// Prints one JSON object: "types" [file, name, kind] (kind "interface" or "class"), "functions" [file, name],
// "methods" [file, receiver type, name], "calls" [caller file, caller, callee file, callee] where caller and
// callee are "Func", "Type.Method" or a named closure "Func.x" / "Type.Method.x" (x := func...), for every
// call whose callee go/types resolves to a function or method
// declared in a package of the list. A package is checked with its in-package test files; its external test
// files (package x_test) are checked as a package of their own; every importer sees the package as checked
// with its tests, so one type is one object. Outside packages that are not in the standard library are not
// found: their calls are left out, and the checker goes on past the errors. "implements": see implements().
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
)

type listed struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
}

type oracle struct {
	named    []*types.TypeName
	root     string
	fset     *token.FileSet
	packages map[string]*listed
	checked  map[string]*types.Package
	files    map[string][]*ast.File
	infos    map[string]*types.Info
	std      types.Importer
	out      map[string][][]string
}

func (o *oracle) rel(pos token.Pos) string {
	name := o.fset.Position(pos).Filename
	r, err := filepath.Rel(o.root, name)
	if err != nil {
		return name
	}
	return filepath.ToSlash(r)
}

func (o *oracle) parse(dir string, names []string) []*ast.File {
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(o.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if f != nil {
			files = append(files, f)
		}
		_ = err
	}
	return files
}

func (o *oracle) Import(path string) (*types.Package, error) {
	if p, ok := o.checked[path]; ok {
		if p == nil {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		return p, nil
	}
	if l, ok := o.packages[path]; ok {
		o.checked[path] = nil
		files := o.parse(l.Dir, append(append(append([]string{}, l.GoFiles...), l.CgoFiles...), l.TestGoFiles...))
		p, info := o.check(path, files)
		o.checked[path] = p
		o.files[path] = files
		o.infos[path] = info
		return p, nil
	}
	return o.std.Import(path)
}

func (o *oracle) check(path string, files []*ast.File) (*types.Package, *types.Info) {
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: o, FakeImportC: true, Error: func(error) {}}
	p, _ := conf.Check(path, o.fset, files, info)
	if p != nil {
		for _, name := range p.Scope().Names() {
			if tn, ok := p.Scope().Lookup(name).(*types.TypeName); ok && !tn.IsAlias() {
				o.named = append(o.named, tn)
			}
		}
	}
	return p, info
}

// implements lists [type file, type, interface file, interface] for every named non-interface type and
// interface with methods of the tree where the type or its pointer implements the interface (a type whose
// underlying type is not known, from an outside module, is left out).
func (o *oracle) implements() {
	seen := map[string]bool{}
	var named []*types.TypeName
	for _, tn := range o.named {
		key := o.rel(tn.Pos()) + ":" + tn.Name()
		if !seen[key] {
			seen[key] = true
			named = append(named, tn)
		}
	}
	for _, t := range named {
		if _, ok := t.Type().Underlying().(*types.Interface); ok || t.Type().Underlying() == types.Typ[types.Invalid] {
			continue
		}
		if _, ok := t.Type().(*types.Named); !ok {
			continue
		}
		if t.Type().(*types.Named).TypeParams().Len() > 0 {
			continue
		}
		for _, i := range named {
			iface, ok := i.Type().Underlying().(*types.Interface)
			if !ok || iface.NumMethods() == 0 || !iface.IsMethodSet() || i.Type().(*types.Named).TypeParams().Len() > 0 {
				continue
			}
			if types.Implements(t.Type(), iface) || types.Implements(types.NewPointer(t.Type()), iface) {
				o.out["implements"] = append(o.out["implements"], []string{o.rel(t.Pos()), t.Name(), o.rel(i.Pos()), i.Name()})
			}
		}
	}
}

func recvName(fn *types.Func) string {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return ""
	}
	t := sig.Recv().Type()
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	if named, ok := t.(*types.Named); ok {
		return named.Obj().Name()
	}
	return "?"
}

func (o *oracle) inTree(p *types.Package) bool {
	if p == nil {
		return false
	}
	_, ok := o.packages[p.Path()]
	if !ok && len(p.Path()) > 5 && p.Path()[len(p.Path())-5:] == "_test" {
		_, ok = o.packages[p.Path()[:len(p.Path())-5]]
	}
	return ok
}

func (o *oracle) declarations(files []*ast.File) {
	for _, f := range files {
		file := o.rel(f.Pos())
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok != token.TYPE {
					continue
				}
				for _, s := range d.Specs {
					ts := s.(*ast.TypeSpec)
					kind := "class"
					if _, ok := ts.Type.(*ast.InterfaceType); ok && !ts.Assign.IsValid() {
						kind = "interface"
					}
					o.out["types"] = append(o.out["types"], []string{file, ts.Name.Name, kind})
				}
			case *ast.FuncDecl:
				if d.Recv == nil {
					o.out["functions"] = append(o.out["functions"], []string{file, d.Name.Name})
				} else {
					o.out["methods"] = append(o.out["methods"], []string{file, receiverType(d), d.Name.Name})
				}
			}
		}
	}
}

func receiverType(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

func (o *oracle) calls(files []*ast.File, info *types.Info) {
	for _, f := range files {
		file := o.rel(f.Pos())
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			caller := fd.Name.Name
			if fd.Recv != nil {
				caller = receiverType(fd) + "." + caller
			}
			o.body(file, caller, fd.Body, info, map[types.Object]string{})
		}
	}
}

// namedClosure: the name and the literal of `x := func...` or `var x = func...` (one name, one value).
func namedClosure(n ast.Node) (*ast.Ident, *ast.FuncLit) {
	switch s := n.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE && len(s.Lhs) == 1 && len(s.Rhs) == 1 {
			id, named := s.Lhs[0].(*ast.Ident)
			lit, literal := s.Rhs[0].(*ast.FuncLit)
			if named && literal && id.Name != "_" {
				return id, lit
			}
		}
	case *ast.ValueSpec:
		if len(s.Names) == 1 && len(s.Values) == 1 && s.Type == nil && s.Names[0].Name != "_" {
			if lit, ok := s.Values[0].(*ast.FuncLit); ok {
				return s.Names[0], lit
			}
		}
	}
	return nil, nil
}

// body records the calls of one callable's body. A named closure (see namedClosure) is a function of its
// own, "caller.x" (listed with the functions), whose body is walked as its own; a call of the local x calls
// it. An anonymous function literal's calls are those of the callable around it.
func (o *oracle) body(file, caller string, body ast.Node, info *types.Info, closures map[types.Object]string) {
	ast.Inspect(body, func(n ast.Node) bool {
		if id, lit := namedClosure(n); lit != nil {
			name := caller + "." + id.Name
			if obj := info.Defs[id]; obj != nil {
				closures[obj] = name
			}
			o.out["functions"] = append(o.out["functions"], []string{file, name})
			o.body(file, name, lit.Body, info, closures)
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fun := call.Fun
		for {
			switch x := fun.(type) {
			case *ast.ParenExpr:
				fun = x.X
				continue
			case *ast.IndexExpr:
				fun = x.X
				continue
			case *ast.IndexListExpr:
				fun = x.X
				continue
			}
			break
		}
		var id *ast.Ident
		switch x := fun.(type) {
		case *ast.Ident:
			id = x
		case *ast.SelectorExpr:
			id = x.Sel
		}
		if id == nil {
			return true
		}
		if v, ok := info.Uses[id].(*types.Var); ok {
			if name, ok := closures[v]; ok {
				o.out["calls"] = append(o.out["calls"], []string{file, caller, file, name})
			}
			return true
		}
		fn, ok := info.Uses[id].(*types.Func)
		if !ok || !o.inTree(fn.Pkg()) {
			return true
		}
		fn = fn.Origin()
		callee := fn.Name()
		if r := recvName(fn); r != "" {
			if r == "?" {
				return true
			}
			callee = r + "." + callee
		}
		o.out["calls"] = append(o.out["calls"], []string{file, caller, o.rel(fn.Pos()), callee})
		return true
	})
}

func main() {
	var list []*listed
	if err := json.NewDecoder(os.Stdin).Decode(&list); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	root, _ := filepath.Abs(os.Args[1])
	fset := token.NewFileSet()
	o := &oracle{root: root, fset: fset, packages: map[string]*listed{}, checked: map[string]*types.Package{},
		files: map[string][]*ast.File{}, infos: map[string]*types.Info{},
		std: importer.ForCompiler(fset, "source", nil),
		out: map[string][][]string{"types": {}, "functions": {}, "methods": {}, "calls": {}, "implements": {}}}
	for _, l := range list {
		o.packages[l.ImportPath] = l
	}
	paths := make([]string, 0, len(list))
	for _, l := range list {
		paths = append(paths, l.ImportPath)
	}
	sort.Strings(paths)
	for _, path := range paths {
		l := o.packages[path]
		o.Import(path)
		own, info := o.files[path], o.infos[path]
		o.declarations(own)
		o.calls(own, info)
		if len(l.XTestGoFiles) > 0 {
			x := o.parse(l.Dir, l.XTestGoFiles)
			_, xinfo := o.check(path+"_test", x)
			o.declarations(x)
			o.calls(x, xinfo)
		}
	}
	o.implements()
	json.NewEncoder(os.Stdout).Encode(o.out)
}
