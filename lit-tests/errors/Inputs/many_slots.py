"""A kc module whose one expression saves 1025 values (errors/rpn-slots.kc)."""
tokens = ['"%0"'] + ['"=$%d"' % i for i in range(1025)]
print("fn @e(%a: f32[4]) -> f32[4] primitive {")
print("  %0 = rpn(%a) {program=[" + ",".join(tokens) + "]} : f32[4]")
print("  return %0\n}")
print("fn @main(%x: f32[4]) -> f32[4] {\n  %0 = @e(%x) : f32[4]\n  return %0\n}")
