"""The readers: one small module per input format, each turning text into located records.

``files`` reads an input as text (or says why not, as a located ``InputError``); ``op_plugin_yaml``
(with ``version_specs``), ``msopgen_json``, ``opdef_cpp`` (over the C++ text helpers of ``cpp_text``) and
``python_registrations`` each read one format. The records they give (``SchemaSite``, ``SourceOp``, the
located files) are what the lint rules, `opkit new --from` and `opkit verify` consume.

This layer sits under lint, adopt, generate and verify and imports none of them; nothing here imports torch.
"""
