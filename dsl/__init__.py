"""The IR: TIR and Relax nodes, IRModule, operator registry, parser and structural equality."""
