//===- Origin.cpp - which nn op an IR op came from ------------------------===//

#include "lowering/conversion/Origin.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Visitors.h"

using namespace mlir;

namespace {
struct Origin {
  std::string op, place;
};

Origin findOrigin(Location loc) {
  Origin origin;
  loc->walk([&](Location inner) {
    if (auto name = dyn_cast<NameLoc>(inner);
        name && origin.op.empty() && name.getName().strref().starts_with("nn."))
      origin.op = name.getName().str();
    if (auto file = dyn_cast<FileLineColLoc>(inner);
        file && origin.place.empty())
      origin.place = (file.getFilename().strref() + ":" +
                      Twine(file.getLine()) + ":" + Twine(file.getColumn()))
                         .str();
    return WalkResult::advance();
  });
  return origin;
}
} // namespace

std::string mlir::nn::originOpName(Location loc, const std::string &fallback) {
  Origin origin = findOrigin(loc);
  return origin.op.empty() ? fallback : origin.op.substr(3);
}

std::string mlir::nn::describeOrigin(Location loc) {
  Origin origin = findOrigin(loc);
  std::string op = origin.op.empty() ? "an nn op" : origin.op;
  return origin.place.empty() ? op : op + " at " + origin.place;
}

Location mlir::nn::originLoc(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc());
      name && name.getName().strref().starts_with("nn."))
    return name;
  return NameLoc::get(op->getName().getIdentifier(), op->getLoc());
}
