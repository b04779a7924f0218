// Where loaded models live in a workspace: .quarry/models/<name>/ (the ONNX export or the server's log, and evals/).
export const MODELS_DIR = '.quarry/models';
