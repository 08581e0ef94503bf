"""The API surface, as torch's: the methods of a Variable (tensor_methods, defined in the source where grep finds
them), torch's function signatures read as torch reads them (torch_signatures), the functions of the `tg.`
namespace (torch_functions), factories and sampling, and torch's own functions met with Variables (interop).
"""
