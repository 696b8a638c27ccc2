//===- StageRun.cpp - running a stage file's stages -----------------------===//
//
// What StagePlan.cpp prepared, run: synthesizing declared data, then each
// stage unless an earlier run left it done (train stages through their
// Trainer, align stages here, decode stages through decodeDataset as
// nn-decode decodes), every file written through the directory that owns
// it, with a done.json written last; progress as plain lines or JSON
// events.
//
//===----------------------------------------------------------------------===//

#include "training/StagesImpl.h"

#include "nn/DataParallel.h"
#include "nn/File.h"
#include "nn/Npy.h"
#include "support/ByteMessage.h"
#include "support/JsonLine.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <random>

using namespace nn;
using namespace nn::training;

//===----------------------------------------------------------------------===//
// Writing through the directories' owners
//===----------------------------------------------------------------------===//

WorkDir &StagePipeline::Impl::ownerOf(const std::string &path) {
  for (auto &[root, owner] : overlays)
    if (path == root || owner->contains(path))
      return *owner;
  return *work;
}

absl::Status
StagePipeline::Impl::writeArrays(const std::string &path,
                                 const std::map<std::string, Tensor> &arrays) {
  if (!leads())
    return absl::OkStatus();
  if (absl::Status status = ownerOf(path).record(path); !status.ok())
    return status;
  // Through `path`.partial (which the list allows beside `path`).
  return writeNpz(path, arrays);
}

absl::Status StagePipeline::Impl::writeText(const std::string &path,
                                            const std::string &text) {
  if (!leads())
    return absl::OkStatus();
  if (absl::Status status = ownerOf(path).record(path); !status.ok())
    return status;
  return writeFileAtomically(path, text);
}

absl::Status StagePipeline::Impl::removeIfThere(const std::string &path) {
  if (!leads() || (!llvm::sys::fs::exists(path) &&
                   !llvm::sys::fs::exists(path + ".partial")))
    return absl::OkStatus();
  return ownerOf(path).remove(path);
}

absl::Status StagePipeline::Impl::createDirectory(const std::string &path) {
  return leads() ? ownerOf(path).createDirectory(path) : absl::OkStatus();
}

absl::Status StagePipeline::Impl::removeUnder(const std::string &path) {
  return leads() ? ownerOf(path).removeUnder(path) : absl::OkStatus();
}

absl::Status StagePipeline::Impl::waitForRanks(const std::string &what) {
  if (!communicator)
    return absl::OkStatus();
  if (absl::Status status = communicator->barrier(); !status.ok())
    return withContext(status, what + ": ");
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

namespace {

/// The contents of a done.json or a checkpoint fingerprint file.
std::string fingerprintText(uint64_t fingerprint, const std::string &what) {
  return support::JsonObject()
             .add("fingerprint", hex(fingerprint))
             .add("stage", what)
             .str() +
         "\n";
}

/// `{"stage": STAGE, "event": WHAT, FIELDS...}` on stdout with --json.
void event(const OutputOptions &output, const std::string &stage,
           const std::string &what,
           const support::JsonObject &fields = support::JsonObject()) {
  if (!output.json)
    return;
  llvm::outs() << support::JsonObject()
                      .add("stage", stage)
                      .add("event", what)
                      .append(fields)
               << "\n";
  llvm::outs().flush();
}

std::vector<std::pair<std::string, double>>
lossValues(const Manifest &manifest, const std::vector<LossValue> &losses) {
  std::vector<std::pair<std::string, double>> values;
  for (const LossValue &loss : losses)
    values.emplace_back(loss.name, lossValue(manifest, loss));
  return values;
}

} // namespace

absl::Status StagePipeline::Impl::synthesize(const DataDecl &decl,
                                             const OutputOptions &output) {
  const Entity &entity = entities.at(decl.name);
  std::string marker = decl.path + ".done.json";
  if (recordedFingerprint(marker) == hex(entity.fingerprint))
    return absl::OkStatus();
  if (!output.json)
    log() << "nn-train: synthesizing data '" << decl.name << "' ("
          << decl.utterances << " utterances of the segment task) in "
          << decl.path << "\n";
  if (absl::Status status = createDirectory(decl.path); !status.ok())
    return status;
  std::vector<float> prototypes = decl.task.prototypes();
  std::mt19937 rng(decl.seed + 1);
  std::vector<UtteranceArrays> utterances;
  for (int64_t u = 0; u < decl.utterances; ++u)
    utterances.push_back(segmentArrays(
        decl.task, sampleSegmentUtterance(decl.task, prototypes, rng)));
  if (absl::Status status =
          writeArrays(decl.path + "/shard-00000.npz",
                      concatenateUtterances(utterances, 0, utterances.size()));
      !status.ok())
    return status;
  event(output, decl.name, "synthesized",
        support::JsonObject()
            .add("utterances", decl.utterances)
            .add("path", decl.path));
  return writeText(marker,
                   fingerprintText(entity.fingerprint, "data." + decl.name));
}

absl::Status StagePipeline::Impl::runTrain(Stage &stage,
                                           const OutputOptions &output,
                                           StageReport &report,
                                           bool &finished) {
  Trainer &trainer = *stage.trainer;
  const Manifest &eval = trainer.evalManifest();
  // Checkpoints of a run with other settings or inputs are not resumed.
  std::string checkpoints = stage.dir + "/checkpoints";
  std::string stamp = checkpoints + "/fingerprint.json";
  bool resumable = recordedFingerprint(stamp) == hex(stage.fingerprint);
  bool hasCheckpoint = false;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(checkpoints, ec), end;
       it != end && !ec; it.increment(ec))
    hasCheckpoint |= llvm::StringRef(it->path()).ends_with(".npz");
  if (!resumable) {
    // What the stage wrote there before, and nothing else (WorkDir).
    if (absl::Status status = removeUnder(checkpoints); !status.ok())
      return status;
    hasCheckpoint = false;
  }
  if (absl::Status status = createDirectory(checkpoints); !status.ok())
    return status;
  if (absl::Status status =
          writeText(stamp, fingerprintText(stage.fingerprint, stage.name));
      !status.ok())
    return status;

  TrainOptions &options = trainer.mutableOptions();
  options.files = work.get();
  if (!output.tensorboardDir.empty())
    options.tensorboardDir = output.tensorboardDir + "/" + stage.name;
  if (hasCheckpoint) {
    options.resume = checkpoints;
  } else if (!stage.readInit.empty() && leads()) {
    // The other ranks of a data-parallel run take rank 0's parameters.
    // Shared by name: the parameters this graph has (shapes were checked).
    const Entity &init = entities.at(stage.readInit);
    TrainState loaded;
    if (absl::Status status = loadCheckpoint(init.parametersPath, loaded);
        !status.ok())
      return status;
    // Shapes were checked (prepareTrain): the same, or with
    // copy_param_mode "subset" grown, which the trainer does as it
    // initializes the parameters.
    options.growInitial = stage.growInit;
    int64_t shared = 0, grown = 0;
    for (const TensorInfo &info : eval.parameters) {
      auto found = loaded.parameters.find(info.name);
      if (found == loaded.parameters.end())
        continue;
      ++shared;
      options.initialParameters[info.name] = found->second;
      std::vector<int64_t> shape;
      for (const Axis &axis : info.axes)
        shape.push_back(axis.size);
      grown += shape != found->second.shape();
    }
    if (!output.json)
      log() << options.output.linePrefix << "starts from '" << stage.readInit
            << "': " << shared << " of " << eval.parameters.size()
            << " parameters shared"
            << (stage.growInit
                    ? " (" + std::to_string(grown) + " of them grown)"
                    : std::string())
            << ", " << eval.parameters.size() - shared << " new\n";
  }
  if (absl::Status status = trainer.run(finished); !status.ok())
    return withContext(status, stage.where + ": ");
  report.devAtStart = lossValues(eval, trainer.devAtStart());
  report.devAtEnd = lossValues(eval, trainer.devAtEnd());
  if (!finished)
    return absl::OkStatus();
  // The model's parameters, without optimizer state: what later stages
  // read.
  std::map<std::string, Tensor> parameters;
  for (const TensorInfo &info : eval.parameters)
    parameters[info.name] = trainer.state().parameters.at(info.name);
  const Entity &written = entities.at(stage.writeParameters);
  if (absl::Status status = writeArrays(written.parametersPath, parameters);
      !status.ok())
    return status;
  if (!output.json)
    log() << options.output.linePrefix << "parameters '"
          << stage.writeParameters << "' in " << written.parametersPath << "\n";
  return absl::OkStatus();
}

absl::Status
StagePipeline::Impl::readParameters(const Stage &stage,
                                    const std::string &except,
                                    std::map<std::string, Tensor> &parameters) {
  const Entity &source = entities.at(stage.readParameters);
  TrainState loaded;
  if (absl::Status status = loadCheckpoint(source.parametersPath, loaded);
      !status.ok())
    return status;
  for (const TensorInfo &info : stage.graph.manifest().parameters) {
    if (info.name == except)
      continue;
    auto found = loaded.parameters.find(info.name);
    // Checked when the stage was prepared; the file may have changed since.
    if (found == loaded.parameters.end())
      return absl::InvalidArgumentError(
          stage.where + ": '" + source.parametersPath + "' lacks parameter '" +
          info.name + "' of graph @" + stage.graph.manifest().graph);
    parameters[info.name] = found->second;
  }
  return absl::OkStatus();
}

/// One dataset aligned: per utterance of the dataset (those an nn.keep
/// left out are not there), its classes per frame, the best path's score
/// (NaN when the graph returns none), whether a path fits and where the
/// utterance is (shard, position); the dataset's shards with every
/// utterance they hold.
struct StagePipeline::Impl::Alignment {
  std::vector<std::vector<int32_t>> paths;
  std::vector<float> scores;
  std::vector<bool> feasible;
  std::vector<std::pair<int64_t, int64_t>> origins;
  std::vector<std::pair<std::string, int64_t>> shards;
  /// The frames of the utterances aligned, and the entries of their paths
  /// (as many, or T + U for RNN-T paths).
  int64_t frames = 0, entries = 0, infeasible = 0;
  /// The first few utterances no path fits, for messages.
  std::vector<std::string> examples;
};

namespace {

/// Every rank's paths and scores (of the utterances `mine` it aligned) in
/// `out` on every rank.
absl::Status gatherPaths(Communicator &communicator,
                         const std::vector<int64_t> &mine,
                         StagePipeline::Impl::Alignment &out) {
  support::Packer packer;
  for (int64_t u : mine)
    packer.put(u).put(out.scores[u]).putAll(out.paths[u]);
  absl::StatusOr<std::vector<std::string>> all =
      allGather(communicator, packer.str());
  if (!all.ok())
    return all.status();
  for (int r = 0; r < communicator.size(); ++r) {
    if (r == communicator.rank())
      continue;
    support::Unpacker unpacker((*all)[r]);
    while (!unpacker.done()) {
      int64_t u = -1;
      float score = 0;
      std::vector<int32_t> path;
      // (A braced list evaluates in order.)
      for (const absl::Status &status :
           {unpacker.get(u), unpacker.get(score), unpacker.getAll(path)})
        if (!status.ok())
          return withContext(status,
                             "rank " + std::to_string(r) + "'s paths: ");
      if (u < 0 || u >= (int64_t)out.paths.size())
        return absl::InternalError("rank " + std::to_string(r) +
                                   " aligned utterance " + std::to_string(u) +
                                   " of " + std::to_string(out.paths.size()));
      out.scores[u] = score;
      out.paths[u] = std::move(path);
    }
  }
  return absl::OkStatus();
}

} // namespace

absl::Status
StagePipeline::Impl::align(Stage &stage, const std::string &dataName,
                           const std::map<std::string, Tensor> &parameters,
                           Alignment &out) {
  const Manifest &manifest = stage.graph.manifest();
  absl::StatusOr<Dataset> dataset =
      Dataset::load(entities.at(dataName).paths, manifest);
  if (!dataset.ok())
    return withContext(dataset.status(), stage.where + ": ");
  out = Alignment();
  for (int64_t k = 0; k < dataset->shardCount(); ++k)
    out.shards.emplace_back(dataset->shardPath(k), dataset->shardUtterances(k));
  out.paths.assign(dataset->size(), {});
  out.scores.assign(dataset->size(), NAN);
  out.feasible.assign(dataset->size(), true);
  for (int64_t u = 0; u < dataset->size(); ++u)
    out.origins.push_back(dataset->origin(u));
  BatchingOptions batching;
  batching.maxSequences = stage.batchSize;
  batching.maxFrames = stage.maxFrames;
  batching.shuffle = false;
  std::vector<std::vector<int64_t>> batches =
      epochBatches(*dataset, batching, 0);
  // Several ranks align every parts()-th batch each and share the paths.
  std::vector<int64_t> mine;
  for (size_t i = part(); i < batches.size(); i += parts()) {
    const std::vector<int64_t> &members = batches[i];
    RunInputs inputs = dataset->batch(members);
    inputs.parameters = parameters;
    DimValues dims;
    if (absl::Status status = stage.graph.validate(inputs, dims); !status.ok())
      return withContext(status, stage.where + ": ");
    RunResult result;
    if (absl::Status status = stage.graph.run(inputs, result); !status.ok())
      return withContext(status, stage.where + ": ");
    const Tensor &alignment = result.outputs.at(0).second;
    // The frames' lengths, or those the graph computed (an RNN-T path's
    // T + U positions).
    std::vector<int32_t> lengths;
    if (auto given = dims.lengths.find(stage.alignDim);
        given != dims.lengths.end())
      lengths = given->second;
    for (const auto &[name, tensor] : result.outputs)
      if (name == lengthsOutputName(stage.alignDim))
        lengths.assign(tensor.data<int32_t>(),
                       tensor.data<int32_t>() + tensor.numElements());
    if (lengths.size() != members.size())
      return absl::InternalError(stage.where +
                                 ": the graph returned no "
                                 "lengths of its alignment's dim '" +
                                 stage.alignDim + "'");
    int64_t time = alignment.shape()[1];
    for (size_t b = 0; b < members.size(); ++b) {
      int64_t u = members[b];
      const int32_t *row = alignment.data<int32_t>() + b * time;
      out.paths[u].assign(row, row + lengths[b]);
      if (stage.alignScored)
        out.scores[u] = (float)result.outputs[1].second.at((int64_t)b);
      mine.push_back(u);
    }
  }
  if (communicator)
    if (absl::Status status = gatherPaths(*communicator, mine, out);
        !status.ok())
      return withContext(status,
                         stage.where + ": aligning '" + dataName + "': ");
  for (const std::vector<int64_t> &members : batches)
    for (int64_t u : members) {
      const std::vector<int32_t> &path = out.paths[u];
      // An infeasible sequence's frames are all -1 and its score -inf
      // (which alone tells one without frames).
      out.feasible[u] = std::none_of(path.begin(), path.end(),
                                     [](int32_t c) { return c < 0; }) &&
                        !(std::isinf(out.scores[u]) && out.scores[u] < 0);
      if (out.feasible[u]) {
        out.frames += dataset->length(u);
        out.entries += (int64_t)path.size();
        continue;
      }
      if (++out.infeasible <= 5) {
        auto [shard, index] = out.origins[u];
        out.examples.push_back("utterance " + std::to_string(index) + " of '" +
                               dataset->shardPath(shard) + "' (" +
                               std::to_string(dataset->length(u)) + " frames)");
      }
    }
  if (out.infeasible && !stage.skipInfeasible) {
    std::string list;
    for (const std::string &what : out.examples)
      list += (list.empty() ? "" : "; ") + what;
    return absl::InvalidArgumentError(
        stage.where + ": no alignment path fits " +
        std::to_string(out.infeasible) + " utterances of '" + dataName +
        "' (too few frames for their labels): " + list +
        (out.infeasible > 5 ? "; ..." : "") +
        ". Fix the data, or set \"infeasible\": \"skip\" to leave them out "
        "of what the stage writes");
  }
  return absl::OkStatus();
}

absl::Status StagePipeline::Impl::runAlign(Stage &stage,
                                           const OutputOptions &output,
                                           StageReport &report) {
  std::map<std::string, Tensor> parameters;
  if (absl::Status status =
          readParameters(stage, stage.priorParameter, parameters);
      !status.ok())
    return status;
  std::string prefix = "[" + stage.name + "] ";

  if (!stage.priorParameter.empty()) {
    // The prior: how often each class is on the best paths of the first
    // dataset, without a prior (add-one smoothed). Aligning with
    // scale x log p(class) subtracted spreads labels over more of their
    // frames (docs/sequence-training.md).
    parameters[stage.priorParameter] = Tensor(DType::f32, {stage.classes});
    Alignment unscaled;
    if (absl::Status status =
            align(stage, stage.readData.front(), parameters, unscaled);
        !status.ok())
      return status;
    std::vector<double> counts(stage.classes, 1.0);
    for (size_t u = 0; u < unscaled.paths.size(); ++u)
      for (int32_t c : unscaled.paths[u])
        if (unscaled.feasible[u] && c >= 0 && c < stage.classes)
          counts[c] += 1;
    double total = (double)unscaled.entries + (double)stage.classes;
    Tensor &prior = parameters[stage.priorParameter];
    report.logPrior.clear();
    std::string text;
    for (int64_t c = 0; c < stage.classes; ++c) {
      double logPrior = std::log(counts[c] / total);
      report.logPrior.push_back(logPrior);
      prior.data<float>()[c] = (float)(stage.priorScale * logPrior);
      char value[32];
      std::snprintf(value, sizeof(value), "%s%.3f", c ? " " : "",
                    counts[c] / total);
      text += value;
    }
    if (absl::Status status = writeArrays(stage.dir + "/prior.npz",
                                          {{stage.priorParameter, prior}});
        !status.ok())
      return status;
    if (!output.json)
      log() << prefix << "prior of '" << stage.readData.front()
            << "' (class frequencies on its best paths): " << text << "; scale "
            << llvm::format("%g", stage.priorScale) << "\n";
  }

  for (size_t d = 0; d < stage.readData.size(); ++d) {
    auto start = std::chrono::steady_clock::now();
    Alignment aligned;
    if (absl::Status status =
            align(stage, stage.readData[d], parameters, aligned);
        !status.ok())
      return status;
    const Entity &written = entities.at(stage.writeData[d]);
    const std::string &overlay = written.paths.back();
    // The overlay holds this alignment's shards alone: what an earlier
    // run wrote there goes first (a dataset with fewer shards now).
    if (absl::Status status = removeUnder(overlay); !status.ok())
      return status;
    // One overlay shard per shard of the data, named like it, with every
    // utterance the shard holds: those left out (no path now, or an
    // nn.keep before) get no frames and nn.keep 0.
    std::vector<std::vector<UtteranceArrays>> shardUtterances;
    for (const auto &[path, count] : aligned.shards) {
      UtteranceArrays leftOut;
      leftOut[stage.array] = Tensor(DType::i32, {0});
      leftOut[stage.array + ".score"] =
          Tensor::of<float>(DType::f32, {}, {NAN});
      leftOut[kKeepArray] = Tensor::of<int32_t>(DType::i32, {}, {0});
      shardUtterances.emplace_back(count, leftOut);
    }
    int64_t kept = 0;
    for (size_t u = 0; u < aligned.paths.size(); ++u) {
      if (!aligned.feasible[u])
        continue;
      auto [shard, index] = aligned.origins[u];
      UtteranceArrays &arrays = shardUtterances[shard][index];
      arrays[stage.array] = Tensor::of<int32_t>(
          DType::i32, {(int64_t)aligned.paths[u].size()}, aligned.paths[u]);
      arrays[stage.array + ".score"] =
          Tensor::of<float>(DType::f32, {}, {aligned.scores[u]});
      arrays[kKeepArray] = Tensor::of<int32_t>(DType::i32, {}, {1});
      ++kept;
    }
    for (size_t k = 0; k < aligned.shards.size(); ++k) {
      const std::vector<UtteranceArrays> &utterances = shardUtterances[k];
      std::string path =
          overlay + "/" +
          llvm::sys::path::filename(aligned.shards[k].first).str();
      if (absl::Status status = writeArrays(
              path, concatenateUtterances(utterances, 0, utterances.size()));
          !status.ok())
        return status;
    }
    report.aligned.push_back({stage.readData[d], stage.writeData[d], overlay,
                              kept, aligned.frames, aligned.infeasible});
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!output.json) {
      log() << prefix << "aligned '" << stage.readData[d] << "' (" << kept
            << " utterances, " << aligned.frames << " frames, "
            << llvm::format("%.0f", aligned.frames / std::max(seconds, 1e-9))
            << " frames/s): '" << stage.writeData[d] << "' in " << overlay
            << "\n";
      if (aligned.infeasible) {
        std::string list;
        for (const std::string &what : aligned.examples)
          list += (list.empty() ? "" : "; ") + what;
        log() << prefix << aligned.infeasible
              << " utterances no path fits left out: " << list
              << (aligned.infeasible > 5 ? "; ..." : "") << "\n";
      }
    }
    event(output, stage.name, "aligned",
          support::JsonObject()
              .add("data", stage.readData[d])
              .add("writes", stage.writeData[d])
              .add("utterances", kept)
              .add("left_out", aligned.infeasible)
              .add("frames", aligned.frames)
              .add("path", overlay));
  }
  return absl::OkStatus();
}

namespace {

/// One utterance a decode stage decoded: its hypothesis, score and edits,
/// and its line as nn-decode --json writes it.
struct DecodedRecord {
  int64_t utterance = 0;
  std::vector<int32_t> labels;
  std::optional<double> score;
  std::optional<EditCounts> counts;
  std::string line;
};

/// Every rank's records on every rank, in dataset order (each utterance
/// of the `utterances` decoded by one rank).
absl::Status gatherDecoded(Communicator &communicator, int64_t utterances,
                           std::vector<DecodedRecord> &records) {
  support::Packer packer;
  for (const DecodedRecord &record : records) {
    packer.put(record.utterance).putAll(record.labels);
    packer.put((uint8_t)record.score.has_value()).put(record.score.value_or(0));
    packer.put((uint8_t)record.counts.has_value())
        .put(record.counts.value_or(EditCounts()));
    packer.putText(record.line);
  }
  absl::StatusOr<std::vector<std::string>> all =
      allGather(communicator, packer.str());
  if (!all.ok())
    return all.status();
  std::vector<std::optional<DecodedRecord>> byUtterance((size_t)utterances);
  for (int r = 0; r < communicator.size(); ++r) {
    support::Unpacker unpacker((*all)[r]);
    while (!unpacker.done()) {
      DecodedRecord record;
      uint8_t hasScore = 0, hasCounts = 0;
      double score = 0;
      EditCounts counts;
      // (A braced list evaluates in order.)
      for (const absl::Status &status :
           {unpacker.get(record.utterance), unpacker.getAll(record.labels),
            unpacker.get(hasScore), unpacker.get(score),
            unpacker.get(hasCounts), unpacker.get(counts),
            unpacker.getText(record.line)})
        if (!status.ok())
          return withContext(status,
                             "rank " + std::to_string(r) + "'s hypotheses: ");
      if (record.utterance < 0 || record.utterance >= utterances ||
          byUtterance[record.utterance])
        return absl::InternalError(
            "rank " + std::to_string(r) + " decoded utterance " +
            std::to_string(record.utterance) + " of " +
            std::to_string(utterances) + ", or another rank did too");
      if (hasScore)
        record.score = score;
      if (hasCounts)
        record.counts = counts;
      byUtterance[record.utterance] = std::move(record);
    }
  }
  records.clear();
  for (std::optional<DecodedRecord> &record : byUtterance)
    if (record)
      records.push_back(std::move(*record));
  return absl::OkStatus();
}

} // namespace

absl::Status StagePipeline::Impl::runDecode(Stage &stage,
                                            const OutputOptions &output,
                                            StageReport &report) {
  const Manifest &manifest = stage.graph.manifest();
  std::map<std::string, Tensor> parameters;
  if (absl::Status status = readParameters(stage, "", parameters); !status.ok())
    return status;
  std::string prefix = "[" + stage.name + "] ";
  DecodeOptions options;
  options.part = part();
  options.parts = parts();
  options.batchSize = stage.batchSize;
  options.maxFrames = stage.maxFrames;
  options.reference = stage.reference;
  options.vocabulary = stage.vocabulary ? &*stage.vocabulary : nullptr;
  bool scored = !stage.hypotheses.score.empty();
  support::JsonObject rates;
  for (size_t d = 0; d < stage.readData.size(); ++d) {
    auto start = std::chrono::steady_clock::now();
    const std::string &dataName = stage.readData[d];
    // Without "ref", the default references score the data that has them.
    absl::StatusOr<Dataset> dataset =
        Dataset::load(entities.at(dataName).paths, manifest,
                      {{stage.reference, !stage.referenceGiven}},
                      Dataset::WithoutFrames::keep);
    if (!dataset.ok())
      return withContext(dataset.status(), stage.where + ": ");
    if (absl::Status status = checkUniqueIds(*dataset, "a decode stage");
        !status.ok())
      return withContext(status, stage.where + ": ");
    // What this process decoded (its part, with several ranks), in
    // dataset order.
    std::vector<DecodedRecord> records;
    absl::StatusOr<DecodeTotals> totals = decodeDataset(
        stage.graph, stage.hypotheses, *dataset, parameters, options,
        [&](const DecodedUtterance &decoded) {
          DecodedRecord &record = records.emplace_back();
          record.utterance = decoded.utterance;
          record.labels = decoded.hypothesis.labels;
          record.score = decoded.hypothesis.score;
          if (decoded.scored)
            record.counts = decoded.scored->counts;
          record.line =
              hypothesisJson(decoded, options.vocabulary != nullptr).str();
          return absl::OkStatus();
        });
    if (!totals.ok())
      return withContext(totals.status(), stage.where + ": ");
    if (communicator) {
      // Every rank's utterances, and the totals they add up to: edits
      // counted again in dataset order, the graph's losses summed.
      if (absl::Status status =
              gatherDecoded(*communicator, dataset->size(), records);
          !status.ok())
        return withContext(status,
                           stage.where + ": decoding '" + dataName + "': ");
      totals->errors = ErrorRateAccumulator();
      for (const DecodedRecord &record : records)
        if (record.counts)
          totals->errors.add(*record.counts);
      if (absl::Status status =
              allReduceLosses(*communicator, manifest, totals->losses.losses);
          !status.ok())
        return withContext(status,
                           stage.where + ": decoding '" + dataName + "': ");
    }
    // Per utterance of the dataset (those nn.keep leaves out have no
    // hypothesis; those without frames have the empty one), and the lines
    // nn-decode --json writes.
    std::vector<std::vector<int32_t>> hypotheses(dataset->size());
    std::vector<float> scores(dataset->size(), NAN);
    std::string lines;
    for (DecodedRecord &record : records) {
      hypotheses[record.utterance] = std::move(record.labels);
      if (record.score)
        scores[record.utterance] = (float)*record.score;
      lines += record.line + "\n";
    }
    support::JsonObject summary =
        summaryJson(*totals, lossesJson(manifest, totals->losses.losses));
    lines += support::JsonObject().add("summary", summary).str() + "\n";
    rates.add(dataName, summary);

    const Entity &written = entities.at(stage.writeData[d]);
    const std::string &overlay = written.paths.back();
    // The overlay holds these hypotheses' shards alone: what an earlier
    // run wrote there goes first (a dataset with fewer shards now).
    if (absl::Status status = removeUnder(overlay); !status.ok())
      return status;
    // One overlay shard per shard of the data, named like it, with every
    // utterance the shard holds: those the data leaves out get an empty
    // hypothesis (and a NaN score), and stay out by the data's own rule.
    std::vector<std::vector<UtteranceArrays>> shardUtterances;
    for (int64_t k = 0; k < dataset->shardCount(); ++k) {
      UtteranceArrays none;
      none[stage.array] = Tensor(DType::i32, {0});
      if (scored)
        none[stage.array + ".score"] = Tensor::of<float>(DType::f32, {}, {NAN});
      shardUtterances.emplace_back(dataset->shardUtterances(k), none);
    }
    for (int64_t u = 0; u < dataset->size(); ++u) {
      auto [shard, index] = dataset->origin(u);
      UtteranceArrays &arrays = shardUtterances[shard][index];
      arrays[stage.array] = Tensor::of<int32_t>(
          DType::i32, {(int64_t)hypotheses[u].size()}, hypotheses[u]);
      if (scored)
        arrays[stage.array + ".score"] =
            Tensor::of<float>(DType::f32, {}, {scores[u]});
    }
    for (int64_t k = 0; k < dataset->shardCount(); ++k) {
      const std::vector<UtteranceArrays> &utterances = shardUtterances[k];
      std::string path = overlay + "/" +
                         llvm::sys::path::filename(dataset->shardPath(k)).str();
      if (absl::Status status = writeArrays(
              path, concatenateUtterances(utterances, 0, utterances.size()));
          !status.ok())
        return status;
    }
    std::string jsonl = hypothesesFile(stage, dataName);
    if (absl::Status status = writeText(jsonl, lines); !status.ok())
      return status;

    StageReport::Decoded decoded;
    decoded.data = dataName;
    decoded.writes = stage.writeData[d];
    decoded.overlay = overlay;
    decoded.hypotheses = jsonl;
    decoded.utterances = totals->utterances;
    decoded.leftOut = totals->leftOut;
    decoded.withoutFrames = totals->withoutFrames;
    decoded.scored = totals->scoring;
    decoded.unit = toString(totals->unit);
    decoded.errors = totals->errors.totals().errors();
    decoded.referenceLength = totals->errors.totals().referenceLength;
    decoded.errorRate = totals->errors.errorRate();
    decoded.losses = lossValues(manifest, totals->losses.losses);
    report.decoded.push_back(decoded);

    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!output.json) {
      log() << prefix << "decoded '" << dataName << "' (" << totals->utterances
            << " utterances, "
            << llvm::format("%.0f",
                            totals->utterances / std::max(seconds, 1e-9))
            << " utterances/s): '" << stage.writeData[d] << "' in " << overlay
            << ", hypotheses in " << jsonl << "\n";
      if (totals->leftOut)
        log() << prefix << totals->leftOut << " utterances of '" << dataName
              << "' left out (nn.keep 0): no hypotheses\n";
      if (totals->withoutFrames)
        log() << prefix << totals->withoutFrames << " utterances of '"
              << dataName
              << "' without frames: the empty hypothesis (not run "
                 "through the graph)\n";
      if (!totals->losses.losses.empty())
        log() << prefix << "'" << dataName
              << "' losses: " << lossesText(manifest, totals->losses.losses)
              << "\n";
      log() << prefix << "'" << dataName << "': " << errorRateText(*totals)
            << "\n";
    }
    support::JsonObject fields;
    fields.add("data", dataName)
        .add("writes", stage.writeData[d])
        .add("utterances", totals->utterances)
        .add("left_out", totals->leftOut);
    if (totals->withoutFrames)
      fields.add("without_frames", totals->withoutFrames);
    if (totals->scoring) {
      if (decoded.errorRate)
        fields.add("error_rate", *decoded.errorRate);
      fields.add("errors", decoded.errors)
          .add("ref_len", decoded.referenceLength)
          .add("unit", decoded.unit);
    }
    fields.add("path", overlay).add("hypotheses", jsonl);
    event(output, stage.name, "decoded", fields);
  }
  return writeText(errorRateFile(stage), rates.str() + "\n");
}

absl::Status StagePipeline::run(const OutputOptions &given, bool &finished) {
  Impl &p = *impl;
  finished = false;
  if (!p.prepared)
    if (absl::Status status = prepare(given); !status.ok())
      return status;
  const OutputOptions output = p.shown(given);
  // Rank 0 writes the data; the others read it once it is there.
  for (const DataDecl &decl : p.data)
    if (decl.synthesize && p.leads())
      if (absl::Status status = p.synthesize(decl, output); !status.ok())
        return status;
  if (absl::Status status = p.waitForRanks("waiting for the data");
      !status.ok())
    return status;
  p.reports.clear();
  size_t ran = 0;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    Stage &stage = p.stages[i];
    StageReport report;
    report.name = stage.name;
    report.kind = toString(stage.kind);
    std::string marker = p.doneMarker(stage.dir);
    std::string position =
        std::to_string(i + 1) + "/" + std::to_string(p.stages.size());
    if (stage.done) {
      report.skipped = true;
      if (!output.json)
        p.log() << "nn-train: stage " << position << " '" << stage.name << "' ("
                << report.kind << "): done in an earlier run, skipped\n";
      event(output, stage.name, "skipped");
      p.reports.push_back(std::move(report));
      continue;
    }
    // A stale marker (other settings or inputs) goes before the stage
    // runs again.
    if (absl::Status status = p.removeIfThere(marker); !status.ok())
      return status;
    if (!output.json) {
      p.log() << "nn-train: stage " << position << " '" << stage.name << "' ("
              << report.kind << ", "
              << llvm::sys::path::filename(stage.graphPath) << ")";
      if (stage.kind == StageKind::train) {
        p.log() << ": losses";
        for (const TrainedLoss &loss : stage.losses)
          p.log() << " " << loss.name;
        p.log() << ", "
                << (stage.steps ? std::to_string(stage.steps) + " steps"
                                : std::to_string(stage.epochs) + " epochs")
                << " on '" << stage.readTrain << "'"
                << (stage.readDev.empty() ? std::string()
                                          : ", dev '" + stage.readDev + "'")
                << (stage.readInit.empty() ? std::string()
                                           : ", from '" + stage.readInit + "'");
      } else {
        p.log() << ": " << stage.readData.size() << " datasets with '"
                << stage.readParameters << "'";
      }
      p.log() << "\n";
    }
    event(output, stage.name, "start",
          support::JsonObject()
              .add("index", i + 1)
              .add("of", p.stages.size())
              .add("kind", report.kind));
    if (absl::Status status = p.createDirectory(stage.dir); !status.ok())
      return status;
    bool stageFinished = true;
    absl::Status status = stage.kind == StageKind::train
                              ? p.runTrain(stage, output, report, stageFinished)
                          : stage.kind == StageKind::align
                              ? p.runAlign(stage, output, report)
                              : p.runDecode(stage, output, report);
    if (!status.ok())
      return status;
    p.reports.push_back(std::move(report));
    if (!stageFinished) {
      p.log() << "nn-train: stage '" << stage.name
              << "' interrupted after step " << stage.trainer->state().batches
              << "; checkpoint in " << stage.trainer->checkpointDir() << "\n";
      return absl::OkStatus();
    }
    if (absl::Status status =
            p.writeText(marker, fingerprintText(stage.fingerprint, stage.name));
        !status.ok())
      return status;
    // Later stages read what rank 0 wrote.
    if (absl::Status status =
            p.waitForRanks("after stage '" + stage.name + "'");
        !status.ok())
      return status;
    event(output, stage.name, "done");
    ++ran;
  }
  if (!output.json)
    p.log() << "nn-train: all " << p.stages.size() << " stages done (" << ran
            << " ran, " << p.stages.size() - ran << " done before); outputs in "
            << p.workDir << "\n";
  finished = true;
  return absl::OkStatus();
}
