//===- NNDialect.h - the nn dialect -----------------------------*- C++ -*-===//
//
// The dialect class, its enums, types and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef NN_DIALECTS_NN_NNDIALECT_H
#define NN_DIALECTS_NN_NNDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "dialects/nn/NNDialect.h.inc"
#include "dialects/nn/NNEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/nn/NNAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/nn/NNTypes.h.inc"

#endif // NN_DIALECTS_NN_NNDIALECT_H
