"""The dataset upload's size limit, applied while Django reads the body."""

from __future__ import annotations

import functools

from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt, csrf_protect

import dataset_files
from wording import words

# Past this request size the rest of a refused body is left unread (the connection is
# closed) rather than read and dropped.
DRAIN_LIMIT = 256 * 1024 * 1024


class SizeLimitHandler(FileUploadHandler):
    """Stops the upload once a file passes `limit` bytes; the handlers after it store
    the file as usual until then, and drop what they stored when it stops.

    Put it first in request.upload_handlers, before anything reads request.POST or
    request.FILES. Django then reads and drops the rest of the body, so the browser
    gets the answer rather than a reset connection; nothing of it is kept.
    `refused_size` is then the size to report: the request's length, as the file's own
    is not known without reading all of it.
    """

    def __init__(self, request=None, *, limit: int) -> None:
        super().__init__(request)
        self.limit = limit
        self.refused_size: int | None = None
        self._request_length = 0
        self._received = 0

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        self._request_length = content_length
        return None  # the parsing is left to Django

    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        self._received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self._received += len(raw_data)
        if self._received > self.limit:
            self.refused_size = max(self._request_length, self._received)
            raise StopUpload(connection_reset=self._request_length > DRAIN_LIMIT)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the file is the next handler's to make


def read_upload(request, limit: SizeLimitHandler):
    """The upload form bound to the request, and why the upload was refused before any
    field could be checked (too large), in words: (form, None) or (None, message). The
    wizard's dataset step and an evaluation's upload read the file the same way."""
    from submissions.forms import UploadForm

    try:
        upload = UploadForm(request.POST, request.FILES)
        upload.is_valid()
    except RequestDataTooBig:
        return None, _("The upload is too large.")
    if limit.refused_size is not None:
        params = {"size": limit.refused_size, "limit": dataset_files.MAX_BYTES}
        return None, words("too_large", params, family="dataset")
    return upload, None


def size_limited(view):
    """An upload view with the size limit put in before anything reads the body, the CSRF
    check included ("Modifying upload handlers on the fly" in Django's documentation), so
    a file over it is stopped there and never stored whole. The view is CSRF-protected
    once the limit is in, and gets it as `limit` (for read_upload). The wizard's dataset
    step and an evaluation's upload are both wrapped so."""
    protected = csrf_protect(view)

    @csrf_exempt
    @functools.wraps(view)
    def with_limit(request, *args, **kwargs):
        limit = SizeLimitHandler(request, limit=dataset_files.MAX_BYTES)
        request.upload_handlers.insert(0, limit)
        return protected(request, *args, limit=limit, **kwargs)

    return with_limit
