"""protenix.data: inputs (FASTA, a3m, Protenix JSON), the built-in CCD table, features, MSAs.

``load_jobs(path)`` reads any input into Protenix JSON job dicts; ``featurize(job, seed)``
returns Protenix's inference features for one job; ``MSAServerClient`` queries a
ColabFold-compatible MMseqs2 server. Bad input raises :class:`InputError` naming file, line
and character.
"""

from .featurizer import build_atoms as build_atoms
from .featurizer import chain_ids as chain_ids
from .featurizer import featurize as featurize
from .msa import msa_features as msa_features
from .msa_server import MSAServerClient as MSAServerClient
from .msa_server import MSAServerError as MSAServerError
from .msa_server import add_server_msas as add_server_msas
from .parsers import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from .parsers import InputError as InputError
from .parsers import a3m_query as a3m_query
from .parsers import attach_a3m as attach_a3m
from .parsers import check_job as check_job
from .parsers import jobs_from_a3m as jobs_from_a3m
from .parsers import jobs_from_fasta as jobs_from_fasta
from .parsers import jobs_from_json as jobs_from_json
from .parsers import load_jobs as load_jobs
from .parsers import parse_a3m as parse_a3m
from .parsers import parse_fasta as parse_fasta
from .parsers import split_complex_a3m as split_complex_a3m
