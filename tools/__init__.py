"""Developer tools: not part of the package (the headless-browser helpers of the HTML tests and the
screenshot script of docs/images/)."""
